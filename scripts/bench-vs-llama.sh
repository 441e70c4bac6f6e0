#!/usr/bin/env bash
# Side-by-side speed of this library and llama.cpp on the same GGUF files:
#
#   scripts/bench-vs-llama.sh LLAMA_BENCH FILE... [-- benchvs flags]
#   scripts/bench-vs-llama.sh ../shared/tools/llama-bench /tmp/tl-q4_0.gguf -- -r 3 -p 512 -n 128
#
# Builds examples/bench (with GOFLAGS, e.g. GOFLAGS=-tags=purego for the
# pure-Go kernels) and runs internal/cmd/benchvs, which alternates the two
# engines round by round and prints medians and ratios (see its doc).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
	sed -n '2,9p' "$0"
	exit 2
fi
llama=$1
shift
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	files+=("$1")
	shift
done
[ "${1:-}" = "--" ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./examples/bench
go build -o "$tmp/benchvs" ./internal/cmd/benchvs
"$tmp/benchvs" -bench "$tmp/bench" -llama "$llama" "$@" "${files[@]}"
