#!/usr/bin/env bash
# The daemon's idle cost: CPU over a window (default 60 s) and RSS while it
# watches 50 projects in Claude Code's layout, against a daemon watching
# none, run side by side in the same script. Goal: under 0.1% of a core.
# Linux only (reads /proc). WINDOW=10s PROJECTS=50 override.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dream" ./cmd/dream
go run ./bench/cmd/daemonidle -dream "$tmp/dream" -projects "${PROJECTS:-50}" -window "${WINDOW:-60s}"
