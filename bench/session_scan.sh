#!/usr/bin/env bash
# session_scan.sh — time the session gate's scan against find(1).
#
# Builds bench/cmd/sessionscan, creates a tree of N_FILES transcripts in a
# temp dir laid out like Codex (sessions/YYYY/MM/DD/rollout-*.jsonl), a tenth
# of them older than a LOCK file, then times REPS runs of each of
#   sessionscan DIR LOCK
#   find DIR -name '*.jsonl' -newer LOCK | wc -l
# alternating, with a warm cache. Prints both mean times, both counts and the
# ratio go/find (below 1 means the Go scan is faster). Exits 1 if the counts
# differ.
#
# Usage: bench/session_scan.sh [REPS] [N_FILES]   (defaults 20, 10000)
set -euo pipefail

reps=${1:-20}
n_files=${2:-10000}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$repo" && go build -o "$work/sessionscan" ./bench/cmd/sessionscan)

tree="$work/sessions"
lock="$work/LOCK"
touch -d '2026-03-14 12:00:00' "$lock"

# 100 files per day directory; touch in bulk so setup stays quick.
per_dir=100
new=()
old=()
for ((i = 0; i < n_files; i++)); do
	d=$((i / per_dir))
	# printf -v, not $(...): a fork per file would dominate setup time.
	printf -v dir '%s/%04d/%02d/%02d' "$tree" $((2026 + d / 336)) $((d / 28 % 12 + 1)) $((d % 28 + 1))
	if ((i % per_dir == 0)); then mkdir -p "$dir"; fi
	printf -v f '%s/rollout-2026-03-14T12-00-00-%08d.jsonl' "$dir" "$i"
	if ((i % 10 == 0)); then old+=("$f"); else new+=("$f"); fi
	if ((${#new[@]} >= 1000)); then touch -d '2026-03-15 08:00:00' "${new[@]}"; new=(); fi
	if ((${#old[@]} >= 1000)); then touch -d '2026-03-13 08:00:00' "${old[@]}"; old=(); fi
done
((${#new[@]})) && touch -d '2026-03-15 08:00:00' "${new[@]}"
((${#old[@]})) && touch -d '2026-03-13 08:00:00' "${old[@]}"
# Noise the scan must ignore.
touch -d '2026-03-15 08:00:00' "$tree/notes.md" "$tree/2026/index.json"

now_ns() { date +%s%N; }

go_count=$("$work/sessionscan" "$tree" "$lock")
find_count=$(find "$tree" -name '*.jsonl' -newer "$lock" | wc -l)

# Warm-up run of each, untimed.
"$work/sessionscan" "$tree" "$lock" >/dev/null
find "$tree" -name '*.jsonl' -newer "$lock" | wc -l >/dev/null

go_total=0
find_total=0
for ((r = 0; r < reps; r++)); do
	t0=$(now_ns)
	"$work/sessionscan" "$tree" "$lock" >/dev/null
	t1=$(now_ns)
	find "$tree" -name '*.jsonl' -newer "$lock" | wc -l >/dev/null
	t2=$(now_ns)
	go_total=$((go_total + t1 - t0))
	find_total=$((find_total + t2 - t1))
done

go_mean_ms=$(awk -v t="$go_total" -v r="$reps" 'BEGIN { printf "%.2f", t / r / 1e6 }')
find_mean_ms=$(awk -v t="$find_total" -v r="$reps" 'BEGIN { printf "%.2f", t / r / 1e6 }')
ratio=$(awk -v g="$go_total" -v f="$find_total" 'BEGIN { printf "%.2f", g / f }')

echo "files:      $n_files (reps: $reps, warm cache)"
echo "go count:   $go_count"
echo "find count: $find_count"
echo "go mean:    ${go_mean_ms} ms"
echo "find mean:  ${find_mean_ms} ms"
echo "ratio go/find: $ratio"

if [[ "$go_count" != "$find_count" ]]; then
	echo "FAIL: counts differ" >&2
	exit 1
fi
