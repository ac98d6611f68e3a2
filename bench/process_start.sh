#!/usr/bin/env bash
# What an agent's hook costs on nearly every turn: `dream hook` (the agent's
# JSON payload on stdin) and `dream maybe` with the time gate closed, as
# whole processes, against a hello-world Go binary in the same run. Both are
# answered by the binary's early start (package early) before the SDKs
# initialise. `dream status --json` over the 10,000 transcripts is timed
# beside them, against `find -newer | wc -l` over the same transcripts.
# Goal (issue 30): hook and maybe <= 3x hello-world.
#
# The commands take turns, one run each per round, so that load from
# elsewhere on the machine falls on all of them alike; each figure is the
# median over RUNS rounds (at least 5), timed with bash's EPOCHREALTIME (no
# fork of date(1) inside the timed interval).
#
#   RUNS=21 DREAM=path/to/dream bench/process_start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-21}
if [ "$runs" -lt 5 ]; then echo "RUNS must be at least 5" >&2; exit 2; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
mkdir -p "$tmp/hello" "$tmp/mem" "$tmp/sessions" "$tmp/repo" "$tmp/home/config" "$tmp/home/state" "$tmp/state" "$tmp/t"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > "$tmp/hello/main.go"
(cd "$tmp/hello" && go mod init hello >/dev/null 2>&1 && go build -trimpath -ldflags '-s -w' -o "$tmp/hello-bin" .)
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
printf '# Memory\n' > "$tmp/mem/MEMORY.md"
for i in $(seq 1 10000); do printf '{"type":"user"}\n' > "$tmp/sessions/s$i.jsonl"; done
touch -d '2 hours ago' "$tmp/sessions"/*.jsonl
printf '{"session_id":"s1","cwd":"%s","hook_event_name":"Stop"}\n' "$tmp/repo" > "$tmp/payload.json"
: > "$tmp/mem/.consolidate-lock" # consolidated just now: the time gate is closed
flags=(--memory-dir "$tmp/mem" --sessions-dir "$tmp/sessions" --repo "$tmp/repo" --state-dir "$tmp/state")
"$DREAM" maybe "${flags[@]}" | grep -q 'time gate is closed' || { echo "the time gate is not closed"; exit 1; }
once() { # command... -> wall microseconds of one run
  local t0=${EPOCHREALTIME/[.,]/}
  "$@" > /dev/null 2>&1
  local t1=${EPOCHREALTIME/[.,]/}
  echo $(( 10#$t1 - 10#$t0 ))
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m / 1000 }'; }
findcmd() { find "$tmp/sessions" -newer "$tmp/mem/.consolidate-lock" | wc -l; }
hookcmd() { "$DREAM" hook "${flags[@]}" < "$tmp/payload.json"; }
for _ in 1 2 3; do # warm the page cache and the dentries
  findcmd > /dev/null; "$tmp/hello-bin" > /dev/null; "$DREAM" status --json "${flags[@]}" > /dev/null; "$DREAM" maybe "${flags[@]}" > /dev/null 2>&1; hookcmd > /dev/null 2>&1
done
if [ -s "$tmp/state/hook.log" ]; then echo "the hook logged something: the time gate is not closed for it" >&2; cat "$tmp/state/hook.log" >&2; exit 1; fi
: > "$tmp/t/find.us"; : > "$tmp/t/hello.us"; : > "$tmp/t/status.us"; : > "$tmp/t/maybe.us"; : > "$tmp/t/hook.us"
for _ in $(seq "$runs"); do
  once findcmd >> "$tmp/t/find.us"
  once "$tmp/hello-bin" >> "$tmp/t/hello.us"
  once "$DREAM" status --json "${flags[@]}" >> "$tmp/t/status.us"
  once "$DREAM" maybe "${flags[@]}" >> "$tmp/t/maybe.us"
  once hookcmd >> "$tmp/t/hook.us"
done
find_ms=$(median < "$tmp/t/find.us")
hello_ms=$(median < "$tmp/t/hello.us")
status_ms=$(median < "$tmp/t/status.us")
maybe_ms=$(median < "$tmp/t/maybe.us")
hook_ms=$(median < "$tmp/t/hook.us")
printf 'median ms over %d rounds: hello-world %s  hook %s  maybe %s  find %s  status %s\n' "$runs" "$hello_ms" "$hook_ms" "$maybe_ms" "$find_ms" "$status_ms"
awk -v f="$find_ms" -v h="$hello_ms" -v s="$status_ms" -v m="$maybe_ms" -v k="$hook_ms" 'BEGIN {
  printf "hook / hello = %.2fx   maybe / hello = %.2fx   (goal <= 3x)\n", k / h, m / h
  printf "status / find = %.2fx\n", s / f }'
ls -l "$DREAM" | awk '{ printf "binary: %.1f MB\n", $5 / 1e6 }'
GODEBUG=inittrace=1 "$DREAM" maybe "${flags[@]}" 2>&1 >/dev/null | awk '/^init / { t += $5; n++ } END { printf "package init before maybe answers: %d packages, %.2f ms\n", n, t }'
