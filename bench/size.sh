#!/usr/bin/env bash
# What it takes to read, build and embed dream (issue 30): Go lines
# (non-test and test), packages, the root package's files, lines and
# exported API (bench/cmd/apisize), what the root links (`go list -deps .`,
# and how much of it is etcd, gRPC and protobuf), functions over 60 and over
# 80 lines (bench/cmd/funclen), a cold build of ./cmd/dream (an empty build
# cache, the module cache kept) and the binary's size, plain and stripped.
#
# With BASE (a commit), the same figures for it, from a temporary worktree,
# measured in the same run, and the ratio of each (the cold builds run one
# after the other, so load elsewhere on the machine falls on both alike).
#
#   bench/size.sh              # this checkout
#   BASE=8ea8cf9 bench/size.sh # this checkout against a commit
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
tmp=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/funclen" ./bench/cmd/funclen
go build -o "$tmp/apisize" ./bench/cmd/apisize

# measure DIR NAME: one line per figure, "key value", into $tmp/NAME.
measure() {
  local dir=$1 out=$tmp/$2.figures
  (
    cd "$dir"
    mapfile -t gofiles < <(git ls-files '*.go')
    nontest=0 tests=0
    for f in "${gofiles[@]}"; do
      n=$(wc -l <"$f")
      case $f in *_test.go) tests=$((tests + n)) ;; *) nontest=$((nontest + n)) ;; esac
    done
    echo "non-test-lines $nontest"
    echo "test-lines $tests"
    echo "packages $(go list ./... | wc -l)"
    rootfiles=$(git ls-files '*.go' | grep -v / | grep -v '_test\.go$')
    echo "root-files $(echo "$rootfiles" | wc -l)"
    echo "root-lines $(cat $rootfiles | wc -l)"
    api=$("$tmp/apisize" .)
    echo "root-exported ${api##*= }"
    deps=$(go list -deps .)
    echo "root-deps $(echo "$deps" | wc -l)"
    echo "root-deps-etcd-grpc-protobuf $(echo "$deps" | grep -cE 'etcd|grpc|protobuf' || true)"
    mapfile -t dirs < <(go list -f '{{.Dir}}' ./...)
    for max in 60 80; do
      over=$("$tmp/funclen" -max "$max" "${dirs[@]}" | grep -c "> max" || true)
      echo "functions-over-$max $over"
    done
    cache=$(mktemp -d)
    start=$(date +%s%N)
    GOCACHE=$cache go build -o "$tmp/bin" ./cmd/dream
    end=$(date +%s%N)
    echo "cold-build-seconds $(( (end - start) / 1000000000 ))"
    echo "binary-bytes $(stat -c %s "$tmp/bin")"
    GOCACHE=$cache go build -ldflags='-s -w' -o "$tmp/bin" ./cmd/dream
    echo "stripped-binary-bytes $(stat -c %s "$tmp/bin")"
    rm -rf "$cache"
  ) >"$out"
}

measure "$here" head
if [ -z "${BASE:-}" ]; then
  awk '{ printf "%-30s %14s\n", $1, $2 }' "$tmp/head.figures"
  exit 0
fi
git worktree add --detach -q "$tmp/base" "$BASE"
measure "$tmp/base" base
printf '%-30s %14s %14s %8s\n' figure "$BASE" HEAD ratio
paste "$tmp/base.figures" "$tmp/head.figures" | awk '{ r = $2 > 0 ? sprintf("%.2f", $4 / $2) : "-"; printf "%-30s %14s %14s %8s\n", $1, $2, $4, r }'
