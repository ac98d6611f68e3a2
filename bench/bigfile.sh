#!/usr/bin/env bash
# Peak RSS and wall time of an offline dream over a memory dir holding one
# large pasted file (default 200 MB) beside 30 topics, against `cp -a` of
# the same dir in the same run. With DREAM_BEFORE set, an older build runs
# on a fresh copy too. Goal (issue 9, class 13): memory bounded whatever
# the file's size.
#
#   SIZE=209715200 DREAM=path/to/dream DREAM_BEFORE=path/to/old bench/bigfile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-209715200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
mkdir -p "$tmp/repo"
"$tmp/genmemory" -dir "$tmp/orig" -topics 30 -big "$size"
t0=$(date +%s%N); cp -a "$tmp/orig" "$tmp/cp"; t1=$(date +%s%N)
cp_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
rm -rf "$tmp/cp"
one() { # label binary
  cp -a "$tmp/orig" "$tmp/m-$1"
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss-$1" "$2" run --provider offline --json --memory-dir "$tmp/m-$1" --repo "$tmp/repo" --state-dir "$tmp/s-$1" > /dev/null || true
  t1=$(date +%s%N)
  awk -v l="$1" -v a="$t0" -v b="$t1" -v c="$cp_s" -v r="$(cat "$tmp/rss-$1")" 'BEGIN { printf "%-6s peak RSS %6.0f MB   wall %6.2f s   (%.1fx cp -a of %.2f s)\n", l, r / 1024, (b - a) / 1e9, (b - a) / 1e9 / c, c }'
  rm -rf "$tmp/m-$1" "$tmp/s-$1"
}
printf 'memory: 30 topics and one %d MB file\n' $((size / 1048576))
[ -n "${DREAM_BEFORE:-}" ] && one before "$DREAM_BEFORE"
one after "$DREAM"
