#!/usr/bin/env bash
# Installs the agents the conformance suite runs, at the versions pinned in
# agents.txt, each with npm into its own folder of a cache dir:
#
#   $DREAM_CONFORMANCE_DIR (default: the user's cache dir, dream/agents)
#     claude-2.1.197/node_modules/.bin/claude
#     ...
#
# Idempotent: an agent already installed at its pinned version is left as it
# is, so a second run takes well under a second. An install goes to a
# temporary folder renamed into place only when npm succeeded, so a failed
# or interrupted run never leaves a half-installed agent the tests would
# take for a real one. An agent that cannot be installed (no npm, no
# network) gets one line on stderr and its tests skip; the script still
# exits 0 unless DREAM_CONFORMANCE_STRICT=1.
#
# usage: bash conformance/install.sh [agent ...]   (default: every agent)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}
if [ "$(uname -s)" = Darwin ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
  cache=$HOME/Library/Caches # what Go's os.UserCacheDir says there
fi
root=${DREAM_CONFORMANCE_DIR:-$cache/dream/agents}
strict=${DREAM_CONFORMANCE_STRICT:-0}

want=" $* "
failed=0
while read -r agent pkg version cmd; do
  case $agent in ''|'#'*) continue ;; esac
  if [ "$#" -gt 0 ] && [[ $want != *" $agent "* ]]; then
    continue
  fi
  dir=$root/$agent-$version
  manifest=$dir/node_modules/$pkg/package.json
  if [ -x "$dir/node_modules/.bin/$cmd" ] && grep -q "\"version\": *\"$version\"" "$manifest" 2>/dev/null; then
    echo "conformance: $agent $version already installed in $dir"
    continue
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "conformance: cannot install $agent $version: npm is not on PATH; its tests will skip" >&2
    failed=1
    continue
  fi
  mkdir -p "$root" || { failed=1; continue; }
  tmp=$(mktemp -d "$root/.install-$agent-XXXXXX") || { failed=1; continue; }
  start=$SECONDS
  if log=$(npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error "$pkg@$version" 2>&1) &&
    [ -x "$tmp/node_modules/.bin/$cmd" ]; then
    rm -rf "$dir" && mv "$tmp" "$dir" &&
      echo "conformance: installed $agent $version in $dir ($((SECONDS - start)) s)"
  else
    echo "conformance: cannot install $agent $version ($pkg): npm failed; its tests will skip:" >&2
    printf '%s\n' "$log" | tail -n 5 | sed 's/^/  /' >&2
    rm -rf "$tmp"
    failed=1
  fi
done <"$here/agents.txt"

if [ "$failed" = 1 ] && [ "$strict" = 1 ]; then
  exit 1
fi
exit 0
