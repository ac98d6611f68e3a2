#!/usr/bin/env bash
# An offline dream against `cp -a` + `git add -A && git commit` of the same
# memory dir, at several sizes, in the same run: wall time, the ratio, peak
# RSS, a second dream right after a one-file hand edit, and a third after
# another edit once the memory has settled. Then the log-log slope
# of the dream's time against the number of topics.
# Goals (issue 15): ratio <= 3 at 30,000 topics, slope <= 1.1, peak RSS
# < 256 MB, second dream <= 1 s at 30,000.
#
#   SIZES="300 3000 30000" DREAM=path/to/dream [DREAM_BEFORE=old] bench/offline_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES:-300 3000 30000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
mkdir -p "$tmp/repo" "$HOME"
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
printf '%6s %8s %10s %10s %7s %9s %10s %10s %10s\n' build topics baseline_s dream_s ratio rss_MB second_s rss2_MB settled_s
: > "$tmp/points"
one() { # label binary n base
  local mem=$tmp/$1-m$3 t0 t1 first second rss rss2 ratio f
  cp -a "$tmp/orig$3" "$mem"
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss" "$2" run --provider offline --json --memory-dir "$mem" --repo "$tmp/repo" --state-dir "$tmp/$1-s$3" > "$tmp/out.json" ||
    echo "$1: dream run exited $? at $3 topics: $(grep -m1 '"error"' "$tmp/out.json")"
  t1=$(date +%s%N)
  first=$(secs "$t0" "$t1")
  rss=$(awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }' "$tmp/rss")
  # A second dream after one hand-edited file.
  # (find -quit, not ls | grep -m1: under pipefail the ls would die of
  # SIGPIPE on a big dir and stop the script.)
  f=$(find "$mem" -maxdepth 1 -name '*_*.md' -print -quit)
  printf -- '- One more fact, written by hand.\n' >> "$f"
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$tmp/rss" "$2" run --provider offline --json --memory-dir "$mem" --repo "$tmp/repo" --state-dir "$tmp/$1-s$3" > "$tmp/out.json" ||
    echo "$1: second dream exited $? at $3 topics: $(grep -m1 '"error"' "$tmp/out.json")"
  t1=$(date +%s%N)
  second=$(secs "$t0" "$t1")
  rss2=$(awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }' "$tmp/rss")
  # A third dream after another one-file edit, once the memory has settled
  # (the files the first dream wrote are no longer too recent for their
  # stats to vouch for them): the steady state of a memory between dreams.
  sleep 3
  printf -- '- Another fact, written by hand.\n' >> "$f"
  t0=$(date +%s%N)
  "$2" run --provider offline --json --memory-dir "$mem" --repo "$tmp/repo" --state-dir "$tmp/$1-s$3" > "$tmp/out.json" ||
    echo "$1: third dream exited $? at $3 topics: $(grep -m1 '"error"' "$tmp/out.json")"
  t1=$(date +%s%N)
  settled=$(secs "$t0" "$t1")
  ratio=$(awk -v a="$first" -v b="$4" 'BEGIN { printf "%.2f", a / b }')
  printf '%6s %8d %10s %10s %7s %9s %10s %10s %10s\n' "$1" "$3" "$4" "$first" "$ratio" "$rss" "$second" "$rss2" "$settled"
  [ "$1" = after ] && echo "$3 $first" >> "$tmp/points"
  rm -rf "$mem" "$tmp/$1-s$3"
}
for n in $sizes; do
  "$tmp/genmemory" -dir "$tmp/orig$n" -topics "$n"
  sync
  # Baseline: copy the dir and commit all of it to git.
  t0=$(date +%s%N)
  cp -a "$tmp/orig$n" "$tmp/b$n"
  (cd "$tmp/b$n" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm baseline)
  t1=$(date +%s%N)
  base=$(secs "$t0" "$t1")
  rm -rf "$tmp/b$n"
  [ -n "${DREAM_BEFORE:-}" ] && one before "$DREAM_BEFORE" "$n" "$base"
  one after "$DREAM" "$n" "$base"
  rm -rf "$tmp/orig$n"
done
awk '{ x = log($1); y = log($2); n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
  END { if (n > 1) printf "log-log slope of dream time vs topics (this build): %.2f\n", (n * sxy - sx * sy) / (n * sxx - sx * sx) }' "$tmp/points"
