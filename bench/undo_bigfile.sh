#!/usr/bin/env bash
# Peak RSS and wall time of `dream undo` of a dream that changed one large
# pasted file (default 200 MB) beside 30 topics, against `cp -a` of that
# file in the same run: an undo streams the version it restores from the
# audit history (git cat-file into a temporary file renamed over the
# memory's), so its memory stays small whatever the file's size. With
# DREAM_BEFORE set, an older build undoes a fresh copy too.
#
#   SIZE=209715200 DREAM=path/to/dream DREAM_BEFORE=path/to/old bench/undo_bigfile.sh
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
go build -o "$tmp/dreamprof" ./bench/cmd/dreamprof
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
"$tmp/genmemory" -dir "$tmp/orig" -topics 30 -big "$size"
big=pasted-build-log.txt
t0=$(date +%s%N); cp -a "$tmp/orig/$big" "$tmp/cp"; t1=$(date +%s%N)
cp_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
rm -f "$tmp/cp"
one() { # label binary
  local mem=$tmp/m-$1 state=$tmp/s-$1 id
  cp -a "$tmp/orig" "$mem"
  id=$("$tmp/dreamprof" -runner one -file "$big" -memory-dir "$mem" -state-dir "$state" | sed -n 's/.* id=\([^ ]*\) .*/\1/p')
  cmp -s "$mem/$big" "$tmp/orig/$big" && { echo "the dream did not change $big" >&2; exit 1; }
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss-$1" "$2" undo "$id" --memory-dir "$mem" --state-dir "$state" > /dev/null
  t1=$(date +%s%N)
  cmp -s "$mem/$big" "$tmp/orig/$big" || { echo "$1: undo did not restore $big" >&2; exit 1; }
  awk -v l="$1" -v a="$t0" -v b="$t1" -v c="$cp_s" -v r="$(cat "$tmp/rss-$1")" 'BEGIN { printf "%-6s undo peak RSS %6.0f MB   wall %6.2f s   (%.1fx cp -a of the file, %.2f s)\n", l, r / 1024, (b - a) / 1e9, (b - a) / 1e9 / c, c }'
  rm -rf "$mem" "$state"
}
printf 'memory: 30 topics and one %d MB file\n' $((size / 1048576))
[ -n "${DREAM_BEFORE:-}" ] && one before "$DREAM_BEFORE"
one after "$DREAM"
