#!/usr/bin/env bash
# grep.sh — time dream's grep tool against ripgrep on a gigabyte of JSONL.
#
# Generates SIZE bytes (default 1 GiB) of Claude Code–like transcripts with
# bench/cmd/genjsonl into DATA (reused when already complete), warms the page
# cache, then for a rare literal, a regular expression and a case-insensitive
# regular expression (no case-sensitive literal to prefilter on) times REPS
# runs (default 3) of each, alternating:
#   grepbench -path DATA -pattern P      the real grep tool, one call, default
#                                        head_limit, so it counts every match
#   rg -j1 -n P DATA > file              ripgrep, one thread, line numbers
# It prints the mean times, the ratio tool/rg (goal: at most 2) and the
# tool's peak RSS (goal: under 64 MB whatever the data size), and exits 1 if
# the two disagree on the number of matching lines.
#
# Environment: SIZE (bytes), REPS, DATA (data dir), KEEP=1 keeps the data.
# Needs ripgrep (Debian: apt-get install ripgrep) and uses GNU time if present.
set -euo pipefail

size=${SIZE:-1073741824}
reps=${REPS:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
data=${DATA:-${TMPDIR:-/tmp}/dream-grep-bench}

if ! command -v rg >/dev/null 2>&1; then
	echo "grep.sh: ripgrep (rg) is required: apt-get install ripgrep" >&2
	exit 2
fi
gnutime=""
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
	gnutime=/usr/bin/time
fi

work=$(mktemp -d)
cleanup() {
	rm -rf "$work"
	if [ "${KEEP:-0}" != 1 ]; then rm -rf "$data"; fi
}
trap cleanup EXIT

(cd "$repo" && go build -o "$work/genjsonl" ./bench/cmd/genjsonl && go build -o "$work/grepbench" ./bench/cmd/grepbench)
"$work/genjsonl" -dir "$data" -size "$size"
# Warm the page cache so that both tools read from memory, not the disk.
cat "$data"/*.jsonl >/dev/null

now() { date +%s.%N; }

# run_tool PATTERN: appends "seconds peak_rss_kb matches" to $work/tool.times
run_tool() {
	local t0 t1 out rss
	t0=$(now)
	if [ -n "$gnutime" ]; then
		"$gnutime" -v -o "$work/time.txt" "$work/grepbench" -path "$data" -pattern "$1" >"$work/gb.out"
	else
		"$work/grepbench" -path "$data" -pattern "$1" >"$work/gb.out"
	fi
	t1=$(now)
	out=$(cat "$work/gb.out")
	if [ -n "$gnutime" ]; then
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
	else
		rss=$(sed -n 's/.*vmhwm_kb=\([-0-9]*\).*/\1/p' <<<"$out")
	fi
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') $rss $(sed -n 's/^matches=\([0-9]*\).*/\1/p' <<<"$out")" >>"$work/tool.times"
}

# run_rg PATTERN: appends "seconds matches" to $work/rg.times. Output goes to
# a file, not /dev/null, where ripgrep would stop at the first match.
run_rg() {
	local t0 t1
	t0=$(now)
	rg -j1 -n "$1" "$data" >"$work/rg.out" || true
	t1=$(now)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') $(wc -l <"$work/rg.out")" >>"$work/rg.times"
}

bytes=$(cat "$data"/*.jsonl | wc -c)
printf 'data: %s bytes in %s files; %s reps each, alternating\n' "$bytes" "$(ls "$data"/*.jsonl | wc -l)" "$reps"
printf '%-40s %10s %10s %8s %12s %9s\n' pattern tool_s rg_s tool/rg tool_rss_MB matches
status=0
for pattern in 'ZEBRA-7741-QUOKKA' 'ECONNREFUSED [0-9.]+:[0-9]{4}' '(?i)econnrefused [0-9.]+:[0-9]{4}'; do
	: >"$work/tool.times"
	: >"$work/rg.times"
	for _ in $(seq "$reps"); do
		run_tool "$pattern"
		run_rg "$pattern"
	done
	tool_mean=$(awk '{s+=$1} END{printf "%.3f", s/NR}' "$work/tool.times")
	rg_mean=$(awk '{s+=$1} END{printf "%.3f", s/NR}' "$work/rg.times")
	rss_mb=$(awk '{if ($2>m) m=$2} END{printf "%.1f", m/1024}' "$work/tool.times")
	tool_n=$(awk 'END{print $3}' "$work/tool.times")
	rg_n=$(awk 'END{print $2}' "$work/rg.times")
	ratio=$(awk -v a="$tool_mean" -v b="$rg_mean" 'BEGIN{printf "%.2f", a/b}')
	printf '%-40s %10s %10s %8s %12s %9s\n' "$pattern" "$tool_mean" "$rg_mean" "$ratio" "$rss_mb" "$tool_n"
	if [ "$tool_n" != "$rg_n" ]; then
		echo "grep.sh: match counts differ for $pattern: tool $tool_n, rg $rg_n" >&2
		status=1
	fi
done
exit "$status"
