#!/usr/bin/env bash
# The audit history's two big records of a memory of TOPICS topic files
# (default 30,000: about 27,000 files, 120 MB) against plain git on a copy
# of the same dir, in the same run:
#   first record  RecordHandEdits of the whole memory   vs  git init; git add -A && git commit
#   dream record  RecordDream of CHANGED rewritten paths vs  git add -A && git commit
# then how long a pack the record left running in the background takes
# (0: none), the audit repository's size and loose-object count. Issue 15:
# an audit commit costs the change, and packing burns no core after a dream.
#
#   TOPICS=30000 CHANGED=22000 bench/audit_record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
topics=${TOPICS:-30000}
changed=${CHANGED:-22000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
go build -o "$tmp/auditrecord" ./bench/cmd/auditrecord
"$tmp/genmemory" -dir "$tmp/mem" -topics "$topics"
cp -a "$tmp/mem" "$tmp/plain"
files=$(find "$tmp/mem" -type f | wc -l)
mb=$(du -sm "$tmp/mem" | awk '{ print $1 }')
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
plaingit() { GIT_DIR="$tmp/plain.git" GIT_WORK_TREE="$tmp/plain" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
  git -c user.name=bench -c user.email=bench@localhost -c gc.auto=0 "$@"; }
plaingit init -q
sync
t0=$(now); plaingit add -A && plaingit commit -q -m first; t1=$(now)
git_first=$(secs "$t0" "$t1")
sync
t0=$(now); "$tmp/auditrecord" first -memory-dir "$tmp/mem" -state-dir "$tmp/state"; t1=$(now)
rec_first=$(secs "$t0" "$t1")
bg_first=$("$tmp/auditrecord" wait -state-dir "$tmp/state")
"$tmp/auditrecord" change -dir "$tmp/mem" -n "$changed"
"$tmp/auditrecord" change -dir "$tmp/plain" -n "$changed"
sync
t0=$(now); plaingit add -A && plaingit commit -q -m dream; t1=$(now)
git_dream=$(secs "$t0" "$t1")
sync
t0=$(now); "$tmp/auditrecord" dream -memory-dir "$tmp/mem" -state-dir "$tmp/state" -n "$changed"; t1=$(now)
rec_dream=$(secs "$t0" "$t1")
bg_dream=$("$tmp/auditrecord" wait -state-dir "$tmp/state")
gitdir=$(ls -d "$tmp"/state/audit/*.git)
printf 'memory: %d files, %d MB; dream rewrites %d\n' "$files" "$mb" "$changed"
printf 'first record: audit %s s, git add -A && commit %s s (%.2fx); background pack after it %s s\n' \
  "$rec_first" "$git_first" "$(awk -v a="$rec_first" -v b="$git_first" 'BEGIN { print a / b }')" "$bg_first"
printf 'dream record: audit %s s, git add -A && commit %s s (%.2fx); background pack after it %s s\n' \
  "$rec_dream" "$git_dream" "$(awk -v a="$rec_dream" -v b="$git_dream" 'BEGIN { print a / b }')" "$bg_dream"
printf 'audit repo: %s MB (%s); plain git repo: %s MB\n' "$(du -sm "$gitdir" | awk '{ print $1 }')" \
  "$(GIT_DIR=$gitdir git count-objects -v | awk '/^count|^packs/ { printf "%s %s ", $1, $2 }')" \
  "$(du -sm "$tmp/plain.git" | awk '{ print $1 }')"
