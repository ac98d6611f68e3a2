#!/usr/bin/env bash
# The pipeline's own cost (lock, staging, change detection, commit, audit,
# tasks, telemetry) without the offline engine: a dream that rewrites one
# file, first and second run, over 300 / 3,000 / 30,000 topics, against
# `cp -a` + `git add -A && git commit` of the same dir in the same run.
# Per size it prints the baseline, the first dream's wall time, their
# ratio, the first dream's peak RSS (git processes included) and the second
# dream's time (one file changed, the history already there); at the end
# the log-log slope of first-dream time and of second-dream time against
# the number of topics (least squares; 1 is linear, 0 flat).
# PROF is a dreamprof binary (bench/cmd/dreamprof); PROF_BEFORE an older
# build of it, run on a fresh copy.
#
#   SIZES="300 3000 30000" PROF=... PROF_BEFORE=... bench/pipeline_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES:-300 3000 30000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${PROF:-}" ]; then
  PROF=$tmp/dreamprof
  go build -o "$PROF" ./bench/cmd/dreamprof
fi
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
printf '%6s %7s %10s %8s %8s %7s %8s\n' build topics baseline_s first_s ratio rss_MB second_s
one() { # label prof n base
  local mem=$tmp/$1-$3 t0 t1 first second
  cp -a "$tmp/orig$3" "$mem"
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss" "$2" -runner one -memory-dir "$mem" -state-dir "$tmp/s-$1-$3" > /dev/null
  t1=$(date +%s%N); first=$(secs "$t0" "$t1")
  t0=$(date +%s%N)
  "$2" -runner one -memory-dir "$mem" -state-dir "$tmp/s-$1-$3" > /dev/null
  t1=$(date +%s%N); second=$(secs "$t0" "$t1")
  printf '%6s %7d %10s %8s %8s %7s %8s\n' "$1" "$3" "$4" "$first" "$(awk -v a="$first" -v b="$4" 'BEGIN { printf "%.2f", a / b }')" "$(awk '{ printf "%.0f", $1 / 1024 }' "$tmp/rss")" "$second"
  echo "$1 $3 $first $second" >> "$tmp/points"
  rm -rf "$mem" "$tmp/s-$1-$3"
}
for n in $sizes; do
  "$tmp/genmemory" -dir "$tmp/orig$n" -topics "$n"
  sync
  t0=$(date +%s%N)
  cp -a "$tmp/orig$n" "$tmp/b$n"
  (cd "$tmp/b$n" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm baseline)
  t1=$(date +%s%N)
  base=$(secs "$t0" "$t1")
  echo "baseline $n $base $base" >> "$tmp/points"
  rm -rf "$tmp/b$n"
  [ -n "${PROF_BEFORE:-}" ] && one before "$PROF_BEFORE" "$n" "$base"
  one after "$PROF" "$n" "$base"
  rm -rf "$tmp/orig$n"
done
# Least-squares slope of ln(time) on ln(topics), per build.
awk '
  { n[$1]++; x = log($2); y1 = log($3 > 0 ? $3 : 0.005); y2 = log($4 > 0 ? $4 : 0.005)
    sx[$1] += x; sxx[$1] += x * x; s1[$1] += y1; sx1[$1] += x * y1; s2[$1] += y2; sx2[$1] += x * y2 }
  END { for (b in n) { if (n[b] < 2) continue; d = n[b] * sxx[b] - sx[b] * sx[b]
    if (b == "baseline") printf "log-log slope %-8s %.2f\n", b, (n[b] * sx1[b] - sx[b] * s1[b]) / d
    else printf "log-log slope %-8s first %.2f  second %.2f\n", b, (n[b] * sx1[b] - sx[b] * s1[b]) / d, (n[b] * sx2[b] - sx[b] * s2[b]) / d } }
' "$tmp/points" | sort
