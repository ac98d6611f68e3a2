#!/usr/bin/env bash
# What `dream hook` costs the agent that runs it: wall time from start to
# exit, with the time gate closed (nothing starts) and with it open (a
# dream is started detached), against `dream version` (process start-up
# alone) measured in the same run. Goals: closed < 200 ms, open < 1 s.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dream" ./cmd/dream
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/home/.local/state" XDG_CONFIG_HOME="$tmp/home/.config"
repo="$tmp/src/app"; mkdir -p "$repo/.git"
slug=$(printf '%s' "$repo" | sed 's/[^A-Za-z0-9]/-/g')
proj="$HOME/.claude/projects/$slug"; mkdir -p "$proj/memory"
printf '# Memory\n\n- [Build](build.md)\n' > "$proj/memory/MEMORY.md"
printf '# Build\n\n- make all\n- make all\n' > "$proj/memory/build.md"
sid=0b7c9e52-3f1d-4c8a-9e2b-5d6f7a8b9c01
for i in 1 2 3 4 5 6; do printf '{"type":"user"}\n' > "$proj/1c8d0f63-402e-4d9b-af3c-6e708192000$i.jsonl"; done
payload="{\"session_id\":\"$sid\",\"transcript_path\":\"$proj/$sid.jsonl\",\"cwd\":\"$repo\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"exit\"}"
ms() { # command... -> mean wall ms over N runs
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$N"); do "$@" >/dev/null; done
  end=$(date +%s%N)
  echo $(( (end - start) / N / 1000 ))
}
run_hook() { printf '%s' "$payload" | "$tmp/dream" hook --host claude; }
base=$(ms "$tmp/dream" version)
: > "$proj/memory/.consolidate-lock"            # consolidated just now: time gate closed
closed=$(ms run_hook)
open_total=0
for _ in $(seq "$N"); do                         # two days ago: every hook starts a dream
  touch -d '2 days ago' "$proj/memory/.consolidate-lock"
  s=$(date +%s%N); run_hook; e=$(date +%s%N)
  open_total=$(( open_total + (e - s) / 1000 ))
  sleep 0.05
done
open=$(( open_total / N ))
sleep 2
awk -v b="$base" -v c="$closed" -v o="$open" 'BEGIN {
  printf "mean wall time per call (us): dream version %d  hook, time gate closed %d  hook, dream started %d\n", b, c, o
  printf "closed / version = %.2fx   started / version = %.2fx\n", c / b, o / b
}'
