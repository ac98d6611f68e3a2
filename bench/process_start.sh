#!/usr/bin/env bash
# The hook path as whole processes: `dream status --json` and `dream maybe`
# with the time gate closed, over 10,000 transcripts, against
# `find -newer | wc -l` over the same transcripts and a hello-world Go
# binary, in the same run (mean of RUNS runs each).
# Goals (issue 15): status <= 0.5x find, maybe <= 2x hello-world.
#
#   RUNS=20 DREAM=path/to/dream bench/process_start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
mkdir -p "$tmp/hello" "$tmp/mem" "$tmp/sessions" "$tmp/repo"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > "$tmp/hello/main.go"
(cd "$tmp/hello" && go mod init hello >/dev/null 2>&1 && go build -trimpath -ldflags '-s -w' -o "$tmp/hello-bin" .)
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
printf '# Memory\n' > "$tmp/mem/MEMORY.md"
for i in $(seq 1 10000); do printf '{"type":"user"}\n' > "$tmp/sessions/s$i.jsonl"; done
touch -d '2 hours ago' "$tmp/sessions"/*.jsonl
: > "$tmp/mem/.consolidate-lock" # consolidated just now: the time gate is closed
flags=(--memory-dir "$tmp/mem" --sessions-dir "$tmp/sessions" --repo "$tmp/repo" --state-dir "$tmp/state")
"$DREAM" maybe "${flags[@]}" | grep -q 'time gate is closed' || { echo "the time gate is not closed"; exit 1; }
mean() { # command... -> mean wall seconds over $runs runs
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" > /dev/null 2>&1; done
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v n="$runs" 'BEGIN { printf "%.5f", (b - a) / 1e9 / n }'
}
findcmd() { find "$tmp/sessions" -newer "$tmp/mem/.consolidate-lock" | wc -l; }
mean findcmd >/dev/null # warm the cache
find_s=$(mean findcmd)
hello_s=$(mean "$tmp/hello-bin")
status_s=$(mean "$DREAM" status --json "${flags[@]}")
maybe_s=$(mean "$DREAM" maybe "${flags[@]}")
printf 'mean seconds over %d runs: find %s  hello-world %s  status %s  maybe %s\n' "$runs" "$find_s" "$hello_s" "$status_s" "$maybe_s"
awk -v f="$find_s" -v h="$hello_s" -v s="$status_s" -v m="$maybe_s" 'BEGIN {
  printf "status / find = %.2fx   status / hello = %.2fx   maybe / hello = %.2fx   maybe / find = %.2fx\n", s / f, s / h, m / h, m / f }'
ls -l "$DREAM" | awk '{ printf "binary: %.1f MB\n", $5 / 1e6 }'
GODEBUG=inittrace=1 "$DREAM" version 2>&1 >/dev/null | awk '{ t += $5; a += $8; n++ } END { printf "package init: %d packages, %.2f ms, %d bytes allocated\n", n, t, a }'
