#!/usr/bin/env bash
# The idle hook's per-turn cost: MaybeStart disabled and with the time gate
# closed, against one os.Stat of the lock file measured in the same run.
# Goal (issue 30): with the time gate closed, 0 allocs and 0 system calls
# (the cached last consolidation and the vDSO clock: see MaybeStart).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench '^BenchmarkMaybeStart$' -benchmem -count "${COUNT:-5}" .)
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkMaybeStart\// {
    split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
    sum[name] += $3; n[name]++; allocs[name] = $7
  }
  END {
    d = sum["disabled"] / n["disabled"]; c = sum["time-gate-closed"] / n["time-gate-closed"]; s = sum["os.Stat-lock-file"] / n["os.Stat-lock-file"]
    printf "mean ns/op: disabled %.2f  time-gate-closed %.2f  os.Stat %.1f\n", d, c, s
    printf "os.Stat / disabled = %.1fx   os.Stat / time-gate-closed = %.1fx   allocs/op (closed) = %s\n", s / d, s / c, allocs["time-gate-closed"]
  }'

# System calls per call: strace counts every call of the benchmark binary at
# two iteration counts; the difference over the extra iterations is what
# each closed-gate MaybeStart costs in system calls (goal: 0).
if command -v strace >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  go test -c -o "$tmp/dream.test" . >/dev/null
  count() {
    strace -f -c -o "$tmp/strace.$1" "$tmp/dream.test" -test.run '^$' -test.bench '^BenchmarkMaybeStart$/^time-gate-closed$' -test.benchtime "$1x" >/dev/null 2>&1
    awk '$NF == "total" { print $(NF-2) }' "$tmp/strace.$1"
  }
  small=$(count 1000); large=$(count 1001000)
  awk -v s="$small" -v l="$large" 'BEGIN { printf "system calls: %d at 1k iterations, %d at 1M: %.6f per closed-gate call\n", s, l, (l - s) / 1000000 }'
else
  echo "strace not installed (apt-get install strace): system calls per call not measured"
fi
