#!/usr/bin/env bash
# An offline dream against `cp -a` + `git add -A && git commit` of the same
# memory dir, at 3,000 and 30,000 topics, in the same run: wall time, the
# ratio, peak RSS, and a second dream right after a one-file hand edit.
# Goals (issue 30): ratio <= 3 at 3,000 topics, <= 5 at 30,000 with peak
# RSS < 256 MB; the second dream after one edit at 3,000 topics <= 1 s.
#
# Each size is measured REPEAT times (default 3), the baseline and each
# build taking turns (the builds in alternating order), so that load from
# elsewhere on the machine falls on all of them alike; the figures are
# medians over the repeats, and the ratio is the median dream over the
# median baseline (the range of the per-round ratios is printed beside it).
#
# Nothing is deleted until the script ends. On ext4 without a journal the
# inode allocator skips inodes freed in the last 60 to 300 seconds, and
# reading their inode-table blocks to find that out made file creation
# right after a mass `rm -rf` cost up to 5x (both the baseline's `cp -a`
# and the dream's writes, whichever came after the delete): a memory dir
# does not see tens of thousands of files deleted minutes before a dream.
# Disk use is about 1.5 GB per round at 30,000 topics.
#
#   SIZES="3000 30000" REPEAT=3 DREAM=path/to/dream [DREAM_BEFORE=old] bench/offline_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES:-3000 30000}
repeat=${REPEAT:-3}
if [ "$repeat" -lt 1 ]; then echo "REPEAT must be at least 1" >&2; exit 2; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
mkdir -p "$tmp/repo" "$HOME"
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m }'; }
# col file n: the median of column n of file
col() { awk -v n="$2" '{ print $n }' "$1" | median; }
dreamrun() { # binary mem state: one offline dream; its failure is printed, not fatal
  "$1" run --provider offline --json --memory-dir "$2" --repo "$tmp/repo" --state-dir "$3" > "$tmp/out.json" 2> "$tmp/err" ||
    echo "dream run exited $? on $2: $(grep -m1 '"error"' "$tmp/out.json") $(tail -3 "$tmp/err")"
}
one() { # label binary n round: appends "first rss second" to $tmp/$label-$n
  local mem=$tmp/$1-m$3-$4 state=$tmp/$1-s$3-$4 t0 t1 first second rss f
  cp -a "$tmp/orig$3" "$mem"
  sync
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss" "$2" run --provider offline --json --memory-dir "$mem" --repo "$tmp/repo" --state-dir "$state" > "$tmp/out.json" 2> "$tmp/err" ||
    echo "$1: dream run exited $? at $3 topics: $(grep -m1 '"error"' "$tmp/out.json") $(tail -3 "$tmp/err")"
  t1=$(date +%s%N)
  first=$(secs "$t0" "$t1")
  rss=$(awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }' "$tmp/rss")
  # A second dream after one hand-edited file. (find -quit, not ls |
  # grep -m1: under pipefail the ls would die of SIGPIPE on a big dir.)
  f=$(find "$mem" -maxdepth 1 -name '*_*.md' -print -quit)
  printf -- '- One more fact, written by hand.\n' >> "$f"
  t0=$(date +%s%N)
  dreamrun "$2" "$mem" "$state"
  t1=$(date +%s%N)
  second=$(secs "$t0" "$t1")
  echo "$first $rss $second" >> "$tmp/$1-$3"
}
printf '%6s %8s %10s %10s %7s %13s %7s %9s\n' build topics baseline_s dream_s ratio ratio_range max_rss second_s
: > "$tmp/goals"
for n in $sizes; do
  "$tmp/genmemory" -dir "$tmp/orig$n" -topics "$n"
  : > "$tmp/base-$n"
  for r in $(seq 1 "$repeat"); do
    # Baseline: copy the dir and commit all of it to git.
    sync
    t0=$(date +%s%N)
    cp -a "$tmp/orig$n" "$tmp/b$n-$r"
    (cd "$tmp/b$n-$r" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm baseline)
    t1=$(date +%s%N)
    echo "$(secs "$t0" "$t1")" >> "$tmp/base-$n"
    # The two builds swap places every round: neither always runs on the
    # warmer cache or the later disk layout.
    if [ -n "${DREAM_BEFORE:-}" ] && [ $((r % 2)) -eq 1 ]; then
      one before "$DREAM_BEFORE" "$n" "$r"
      one after "$DREAM" "$n" "$r"
    else
      one after "$DREAM" "$n" "$r"
      [ -n "${DREAM_BEFORE:-}" ] && one before "$DREAM_BEFORE" "$n" "$r"
    fi
  done
  base=$(col "$tmp/base-$n" 1)
  for b in before after; do
    [ -s "$tmp/$b-$n" ] || continue
    first=$(col "$tmp/$b-$n" 1)
    ratio=$(awk -v a="$first" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    range=$(paste -d' ' "$tmp/base-$n" "$tmp/$b-$n" | awk '{ r = $2 / $1; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r } END { printf "%.2f-%.2f", lo, hi }')
    rss=$(awk '$2 > m { m = $2 } END { print m }' "$tmp/$b-$n")
    second=$(col "$tmp/$b-$n" 3)
    printf '%6s %8d %10s %10s %7s %13s %7s %9s\n' "$b" "$n" "$base" "$first" "$ratio" "$range" "$rss" "$second"
    echo "$b $n $ratio $rss $second" >> "$tmp/goals"
  done
done
echo "(medians of $repeat rounds; max_rss in MB over the first dreams)"
awk '{ ratio[$1, $2] = $3; rss[$1, $2] = $4; second[$1, $2] = $5; seen[$1] = 1 }
  END {
    for (b in seen) {
      line = b ":"
      if ((b, 3000) in ratio) line = line sprintf("  3,000 topics %.2fx (goal <= 3)  second dream after one edit %.2f s (goal <= 1)", ratio[b, 3000], second[b, 3000])
      if ((b, 30000) in ratio) line = line sprintf("  30,000 topics %.2fx (goal <= 5)  peak RSS %d MB (goal < 256)", ratio[b, 30000], rss[b, 30000])
      print line
    }
  }' "$tmp/goals" | sort -r
