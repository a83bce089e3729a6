#!/usr/bin/env bash
# make bench: every Go benchmark of the hot paths in one run, so the figures
# sit side by side and are taken on the same machine state. Results are also
# written to bench-out/bench.txt for benchstat.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-out
BENCHTIME="${BENCHTIME:-1s}"
pkgs=$(go list ./... | while read -r p; do
	dir=$(go list -f '{{.Dir}}' "$p")
	if grep -qs '^func Benchmark' "$dir"/*_test.go; then echo "$p"; fi
done)
echo "benchmarking: $(echo $pkgs | wc -w) packages, -benchtime=$BENCHTIME"
go test -run='^$' -bench=. -benchmem -benchtime="$BENCHTIME" $pkgs | tee bench-out/bench.txt
