#!/usr/bin/env bash
# The hook path as whole processes: `dream status --json` and `dream maybe`
# with the time gate closed, over 10,000 transcripts, against
# `find -newer | wc -l` over the same transcripts and a hello-world Go
# binary, in the same run. The four commands take turns, one run each per
# round, so that load from elsewhere on the machine falls on all of them
# alike; each figure is the median over RUNS rounds (at least 5), timed with
# bash's EPOCHREALTIME (no fork of date(1) inside the timed interval).
# Goals (issue 15): status <= 0.5x find, maybe <= 2x hello-world. `dream
# hook` with the same closed gate (what an agent's hook runs on every turn,
# an agent's JSON payload on stdin) is timed beside them.
#
# `dream maybe` run again with nothing changed answers from its gate stamp
# (package gatestamp) after about 24 initialisers; "maybe deciding" is the
# same command with a variable no decision reads set to a new value each
# round, so that it decides in the early start and records its answer, as
# the first run of a command, or the first after any input changed, does.
#
# So is the floor under both: the same build with package bench/startfloor
# linked in (go build -overlay adds a blank import to package main; nothing
# on disk changes), whose init answers `maybe` at once and counts the
# transcripts newer than the lock file for `status`, one fstatat each on
# every core, before any of dream's own packages has started (see its doc).
# No early start inside this one binary can go under it.
#
#   RUNS=21 DREAM=path/to/dream bench/process_start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-21}
if [ "$runs" -lt 5 ]; then echo "RUNS must be at least 5" >&2; exit 2; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DREAM:-}" ]; then
  DREAM=$tmp/dream
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$DREAM" ./cmd/dream
fi
# The dirs a user's machine has (the config and state homes, dream's state
# dir), and one for this script's own files: a stamp compares an absent
# file's nearest existing parent, which must not be a dir this script
# writes into while it times.
mkdir -p "$tmp/hello" "$tmp/mem" "$tmp/sessions" "$tmp/repo" "$tmp/home/config" "$tmp/home/state" "$tmp/state/journal" "$tmp/t"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > "$tmp/hello/main.go"
(cd "$tmp/hello" && go mod init hello >/dev/null 2>&1 && go build -trimpath -ldflags '-s -w' -o "$tmp/hello-bin" .)
mkdir -p "$tmp/floor"
printf 'package main\n\nimport _ "github.com/dreamkit/dream/bench/startfloor"\n' > "$tmp/floor/main.go"
printf '{"Replace":{"%s":"%s"}}\n' "$PWD/cmd/dream/startfloor_main.go" "$tmp/floor/main.go" > "$tmp/floor/overlay.json"
CGO_ENABLED=0 go build -overlay "$tmp/floor/overlay.json" -trimpath -ldflags '-s -w' -o "$tmp/floor-bin" ./cmd/dream
export HOME=$tmp/home XDG_STATE_HOME=$tmp/home/state XDG_CONFIG_HOME=$tmp/home/config
unset ANTHROPIC_API_KEY OPENAI_API_KEY DREAM_PROVIDER
printf '# Memory\n' > "$tmp/mem/MEMORY.md"
for i in $(seq 1 10000); do printf '{"type":"user"}\n' > "$tmp/sessions/s$i.jsonl"; done
touch -d '2 hours ago' "$tmp/sessions"/*.jsonl
printf '{"session_id":"s1","cwd":"%s","hook_event_name":"Stop"}\n' "$tmp/repo" > "$tmp/payload.json"
: > "$tmp/mem/.consolidate-lock" # consolidated just now: the time gate is closed
: > "$tmp/t/find.us"; : > "$tmp/t/hello.us"; : > "$tmp/t/floor.us"; : > "$tmp/t/floorstatus.us"; : > "$tmp/t/status.us"; : > "$tmp/t/maybe.us"; : > "$tmp/t/hook.us"; : > "$tmp/t/decide.us"
sleep 2.1 # the gate stamp's racy margin: files younger than 2 s are not recorded
flags=(--memory-dir "$tmp/mem" --sessions-dir "$tmp/sessions" --repo "$tmp/repo" --state-dir "$tmp/state")
"$DREAM" maybe "${flags[@]}" | grep -q 'time gate is closed' || { echo "the time gate is not closed"; exit 1; }
once() { # command... -> wall microseconds of one run
  local t0=${EPOCHREALTIME/[.,]/}
  "$@" > /dev/null 2>&1
  local t1=${EPOCHREALTIME/[.,]/}
  echo $(( 10#$t1 - 10#$t0 ))
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m / 1000 }'; }
findcmd() { find "$tmp/sessions" -newer "$tmp/mem/.consolidate-lock" | wc -l; }
hookcmd() { "$DREAM" hook "${flags[@]}" < "$tmp/payload.json"; }
# A variable no decision reads, new in every round: the gate stamp's key
# (package gatestamp) changes, so this run decides in the early start and
# records its answer, as the first run of a command does.
decidecmd() { DREAM_BENCH_ROUND=$round "$DREAM" maybe "${flags[@]}"; }
floorstatus() { "$tmp/floor-bin" status --sessions-dir "$tmp/sessions" --lock "$tmp/mem/.consolidate-lock"; }
for _ in 1 2 3; do # warm the page cache and the dentries
  findcmd > /dev/null; "$tmp/hello-bin" > /dev/null; "$tmp/floor-bin" maybe > /dev/null; floorstatus > /dev/null; "$DREAM" status --json "${flags[@]}" > /dev/null; "$DREAM" maybe "${flags[@]}" > /dev/null 2>&1; hookcmd > /dev/null 2>&1
done
if [ -s "$tmp/state/hook.log" ]; then echo "the hook logged something: the time gate is not closed for it" >&2; cat "$tmp/state/hook.log" >&2; exit 1; fi
for round in $(seq "$runs"); do
  once findcmd >> "$tmp/t/find.us"
  once "$tmp/hello-bin" >> "$tmp/t/hello.us"
  once "$tmp/floor-bin" maybe "${flags[@]}" >> "$tmp/t/floor.us"
  once floorstatus >> "$tmp/t/floorstatus.us"
  once "$DREAM" status --json "${flags[@]}" >> "$tmp/t/status.us"
  once "$DREAM" maybe "${flags[@]}" >> "$tmp/t/maybe.us"
  once hookcmd >> "$tmp/t/hook.us"
  once decidecmd >> "$tmp/t/decide.us"
done
find_ms=$(median < "$tmp/t/find.us")
hello_ms=$(median < "$tmp/t/hello.us")
floor_ms=$(median < "$tmp/t/floor.us")
floorstatus_ms=$(median < "$tmp/t/floorstatus.us")
status_ms=$(median < "$tmp/t/status.us")
maybe_ms=$(median < "$tmp/t/maybe.us")
hook_ms=$(median < "$tmp/t/hook.us")
decide_ms=$(median < "$tmp/t/decide.us")
count=$("$DREAM" status --json "${flags[@]}" | awk -F': *' '/"sessions_touched_since"/ { gsub(/,/, "", $2); print $2 }')
printf 'median ms over %d rounds: find %s  hello-world %s  status %s  maybe %s  maybe deciding %s  hook %s  floor maybe %s  floor status %s  (status counted %s sessions, the floor %s)\n' "$runs" "$find_ms" "$hello_ms" "$status_ms" "$maybe_ms" "$decide_ms" "$hook_ms" "$floor_ms" "$floorstatus_ms" "$count" "$(floorstatus)"
awk -v f="$find_ms" -v h="$hello_ms" -v s="$status_ms" -v m="$maybe_ms" -v k="$hook_ms" -v fl="$floor_ms" -v fs="$floorstatus_ms" -v d="$decide_ms" 'BEGIN {
  printf "status / find = %.2fx (goal <= 0.5x)   maybe / hello = %.2fx (goal <= 2x)   maybe deciding / hello = %.2fx   hook / hello = %.2fx   status / hello = %.2fx   maybe / find = %.2fx\n", s / f, m / h, d / h, k / h, s / h, m / f
  printf "floors in this binary: maybe / hello = %.2fx   status / find = %.2fx\n", fl / h, fs / f }'
# CPU time is steadier than wall time on a machine others load: with perf(1)
# at hand, also the mean task-clock of each (the wall figures stay the ones
# the goals are about).
if command -v perf > /dev/null && perf stat -x, -e task-clock true > /dev/null 2>&1; then
  cpu() { perf stat -x, -e task-clock -r "$runs" "$@" 2>&1 > /dev/null | awk -F, '/task-clock/ { printf "%.2f", $1 }'; }
  findsh=$(printf 'find %q -newer %q | wc -l' "$tmp/sessions" "$tmp/mem/.consolidate-lock")
  printf 'cpu ms (perf task-clock, mean of %d): find|wc %s  find %s  hello-world %s  status %s  maybe %s\n' "$runs" \
    "$(cpu sh -c "$findsh")" "$(cpu find "$tmp/sessions" -newer "$tmp/mem/.consolidate-lock")" "$(cpu "$tmp/hello-bin")" \
    "$(cpu "$DREAM" status --json "${flags[@]}")" "$(cpu "$DREAM" maybe "${flags[@]}")"
fi
ls -l "$DREAM" | awk '{ printf "binary: %.1f MB\n", $5 / 1e6 }'
GODEBUG=inittrace=1 DREAM_BENCH_ROUND=trace "$DREAM" maybe "${flags[@]}" 2>&1 >/dev/null | awk '/^init / { t += $5; a += $8; n++ } END { printf "package init before maybe answers, deciding: %d packages, %.2f ms, %d bytes allocated\n", n, t, a }'
GODEBUG=inittrace=1 DREAM_BENCH_ROUND=trace "$DREAM" maybe "${flags[@]}" 2>&1 >/dev/null | awk '/^init / { t += $5; a += $8; n++ } END { printf "package init before maybe answers from its gate stamp: %d packages, %.2f ms, %d bytes allocated\n", n, t, a }'
GODEBUG=inittrace=1 "$tmp/floor-bin" maybe 2>&1 >/dev/null | awk '/^init / { t += $5; n++ } END { printf "package init before the floor answers: %d packages, %.2f ms\n", n, t }'
GODEBUG=inittrace=1 "$DREAM" status --json "${flags[@]}" 2>&1 >/dev/null | awk '/^init / { t += $5; a += $8; n++ } END { printf "package init of the whole binary (status): %d packages, %.2f ms, %d bytes allocated\n", n, t, a }'
# Where the init time goes, by module, when maybe decides (a new key each
# run): each package's least time over 7 runs (what it costs when nothing else preempts it), summed per module.
for i in 1 2 3 4 5 6 7; do GODEBUG=inittrace=1 DREAM_BENCH_ROUND=module$i "$DREAM" maybe "${flags[@]}" 2>&1 >/dev/null; done | awk '/^init / {
    if (!($2 in best) || $5 < best[$2]) best[$2] = $5
  } END {
    for (pkg in best) {
      n = split(pkg, p, "/")
      if (p[1] !~ /\./) m = "std"
      else if (p[1] == "github.com" && n >= 3) m = p[1] "/" p[2] "/" p[3]
      else m = p[1] "/" p[2]
      t[m] += best[pkg]; all += best[pkg]
    }
    for (m in t) printf "%.2f %s\n", t[m], m
    printf "%.2f (all)\n", all
  }' | sort -rn | head -10 | awk '{ printf "%s%s %s ms", (NR > 1 ? ", " : "init by module (least of 7 runs): "), $2, $1 } END { print "" }'
