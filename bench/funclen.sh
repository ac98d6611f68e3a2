#!/bin/sh
# funclen.sh: the length of every function of the root package, longest
# first; exits 1 when one is over MAX lines (default 60). Run from the
# repository root: sh bench/funclen.sh [MAX]
set -e
cd "$(dirname "$0")/.."
exec go run ./bench/cmd/funclen -max "${1:-60}" .
