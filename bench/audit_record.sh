#!/usr/bin/env bash
# The audit history's two big records of a memory of TOPICS topic files
# (default 30,000: about 27,000 files, 120 MB) against plain git on a copy
# of the same dir, in the same run:
#   first record  RecordHandEdits of the whole memory   vs  git init; git add -A && git commit
#   dream record  RecordDream of CHANGED rewritten paths vs  git add -A && git commit
#   touched       RecordHandEdits after every file got a new mtime, bytes
#                 unchanged (a copy that keeps contents, not times) vs git add -A
#   settled       a settled dream of ONE file (default 1): the hand-edit
#                 record before it (nothing to record), the change, the
#                 dream's record of it (median of 5) vs the same change and
#                 git add -A && git commit
# then how long a pack each record left running in the background takes
# (0: none), the audit repository's size and loose-object count. Issue 15:
# an audit commit costs the change, and packing burns no core after a dream.
#
#   TOPICS=30000 CHANGED=22000 bench/audit_record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
topics=${TOPICS:-30000}
changed=${CHANGED:-22000}
one=${ONE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/genmemory" ./bench/cmd/genmemory
go build -o "$tmp/auditrecord" ./bench/cmd/auditrecord
"$tmp/genmemory" -dir "$tmp/mem" -topics "$topics"
cp -a "$tmp/mem" "$tmp/plain"
files=$(find "$tmp/mem" -type f | wc -l)
mb=$(du -sm "$tmp/mem" | awk '{ print $1 }')
# timed VAR cmd...: VAR="wall s (cpu s)", the CPU time user + system of
# the command and every process it waited for.
TIMEFORMAT='%R %U %S'
timed() {
  local var=$1 t
  shift
  sync
  t=$( { time "$@" > /dev/null; } 2>&1 | tail -1)
  printf -v "$var" '%s' "$(awk -v t="$t" 'BEGIN { split(t, f, " "); printf "%.2f s (cpu %.2f s)", f[1], f[2] + f[3] }')"
}
wall() { echo "${1%% *}"; }
plaingit() { GIT_DIR="$tmp/plain.git" GIT_WORK_TREE="$tmp/plain" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
  git -c user.name=bench -c user.email=bench@localhost -c gc.auto=0 "$@"; }
plaingit init -q
gitcommit() { plaingit add -A && plaingit commit -q -m "$1"; }
timed git_first gitcommit first
timed rec_first "$tmp/auditrecord" first -memory-dir "$tmp/mem" -state-dir "$tmp/state"
bg_first=$("$tmp/auditrecord" wait -state-dir "$tmp/state")
"$tmp/auditrecord" change -dir "$tmp/mem" -n "$changed"
"$tmp/auditrecord" change -dir "$tmp/plain" -n "$changed"
timed git_dream gitcommit dream
timed rec_dream "$tmp/auditrecord" dream -memory-dir "$tmp/mem" -state-dir "$tmp/state" -n "$changed"
bg_dream=$("$tmp/auditrecord" wait -state-dir "$tmp/state")
"$tmp/auditrecord" touch -dir "$tmp/mem"
"$tmp/auditrecord" touch -dir "$tmp/plain"
gitadd() { plaingit add -A; }
timed git_touch gitadd
timed rec_touch "$tmp/auditrecord" hand -memory-dir "$tmp/mem" -state-dir "$tmp/state"
"$tmp/auditrecord" hand -memory-dir "$tmp/mem" -state-dir "$tmp/state" # settle after the touch
plainone() { "$tmp/auditrecord" change -dir "$tmp/plain" -n "$one" && gitcommit one; }
# median VAR cmd...: the run of median wall time of 5
median() {
  local var=$1 i runs=()
  shift
  for i in 1 2 3 4 5; do
    timed run "$@"
    runs+=("$run")
  done
  printf -v "$var" '%s' "$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p)"
}
median git_one plainone
median rec_one "$tmp/auditrecord" settled -memory-dir "$tmp/mem" -state-dir "$tmp/state" -n "$one"
gitdir=$(ls -d "$tmp"/state/audit/*.git)
printf 'memory: %d files, %d MB; dream rewrites %d\n' "$files" "$mb" "$changed"
ratio() { awk -v a="$(wall "$1")" -v b="$(wall "$2")" 'BEGIN { printf "%.2f", a / b }'; }
printf 'first record: audit %s, git add -A && commit %s: %sx; background pack after it %s s\n' \
  "$rec_first" "$git_first" "$(ratio "$rec_first" "$git_first")" "$bg_first"
printf 'dream record: audit %s, git add -A && commit %s: %sx; background pack after it %s s\n' \
  "$rec_dream" "$git_dream" "$(ratio "$rec_dream" "$git_dream")" "$bg_dream"
printf 'touched, nothing to record: audit %s, git add -A %s: %sx\n' "$rec_touch" "$git_touch" "$(ratio "$rec_touch" "$git_touch")"
printf 'settled dream of %d file(s): audit hand + dream records %s, change + git add -A && commit %s: %sx\n' "$one" "$rec_one" "$git_one" "$(ratio "$rec_one" "$git_one")"
printf 'audit repo: %s MB (%s); plain git repo: %s MB\n' "$(du -sm "$gitdir" | awk '{ print $1 }')" \
  "$(GIT_DIR=$gitdir git count-objects -v | awk '/^count|^packs/ { printf "%s %s ", $1, $2 }')" \
  "$(du -sm "$tmp/plain.git" | awk '{ print $1 }')"
