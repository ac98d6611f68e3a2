#!/usr/bin/env bash
# `dream log --json` over a history of 1,000 dreams, as a whole process,
# against plain `git log -p` of the same audit repository and a
# hello-world Go binary, in the same run (mean of RUNS runs).
# Goal (issue 15): under 100 ms.
#
#   DREAMS=1000 RUNS=10 DREAM=path/to/dream bench/log.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
go build -o "$tmp/genhistory" ./bench/cmd/genhistory
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
"$tmp/genhistory" -memory-dir "$tmp/mem" -state-dir "$tmp/state" -dreams "${DREAMS:-1000}"
gitdir=$(ls -d "$tmp"/state/audit/*.git)
mean() {
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" > /dev/null; done
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v n="$runs" 'BEGIN { printf "%.4f", (b - a) / 1e9 / n }'
}
flags=(--memory-dir "$tmp/mem" --state-dir "$tmp/state")
entries=$("$DREAM" log --json --limit 0 "${flags[@]}" | grep -o '"id":' | wc -l)
gitlog() { GIT_DIR=$gitdir git log -p -n 20 > /dev/null; }
git_s=$(mean gitlog)
log20_s=$(mean "$DREAM" log --json "${flags[@]}")
logall_s=$(mean "$DREAM" log --json --limit 0 "${flags[@]}")
loose=$(GIT_DIR=$gitdir git count-objects | awk '{ print $1 }')
printf 'history: %d entries, %s loose objects\n' "$entries" "$loose"
printf 'mean seconds: git log -p -n 20 %s   dream log --json (20) %s   dream log --json --limit 0 (%d) %s\n' "$git_s" "$log20_s" "$entries" "$logall_s"
awk -v g="$git_s" -v a="$log20_s" -v b="$logall_s" 'BEGIN { printf "dream log (20) / git log -p -n 20 = %.2fx; all entries: %.0f ms\n", a / g, b * 1000 }'
if [ -n "${DREAM_BEFORE:-}" ]; then # an older build, over the same history
  b20=$(mean "$DREAM_BEFORE" log --json "${flags[@]}")
  ball=$(mean "$DREAM_BEFORE" log --json --limit 0 "${flags[@]}")
  awk -v a="$log20_s" -v b="$logall_s" -v c="$b20" -v d="$ball" 'BEGIN { printf "before: (20) %.0f ms, all %.0f ms; after / before: (20) %.3fx, all %.3fx\n", c * 1000, d * 1000, a / c, b / d }'
fi
