#!/usr/bin/env bash
# make bench: every Go benchmark of the hot paths in one run, so the figures
# sit side by side and are taken on the same machine state; then, as root,
# the lab's userspace forwarder against the Linux bridge on the same veths.
# Results are also written to bench-out/ for benchstat.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-out
BENCHTIME="${BENCHTIME:-1s}"
FORWARD_FRAMES="${FORWARD_FRAMES:-300000}"

pkgs=$(go list ./... | while read -r p; do
	dir=$(go list -f '{{.Dir}}' "$p")
	if grep -qs '^func Benchmark' "$dir"/*_test.go; then echo "$p"; fi
done)
echo "== Go benchmarks: $(echo $pkgs | wc -w) packages, -benchtime=$BENCHTIME"
# BenchmarkForward moves real frames between namespaces: it runs below with a
# fixed frame count instead of the default calibration.
go test -run='^$' -bench=. -skip='^BenchmarkForward$' -benchmem -benchtime="$BENCHTIME" $pkgs | tee bench-out/bench.txt

echo
echo "== forwarder vs Linux bridge on the same veths ($FORWARD_FRAMES frames each)"
if [ "$(id -u)" != 0 ]; then
	echo "(needs root: skipped)"
	exit 0
fi
go test -run='^$' -bench='^BenchmarkForward$' -benchtime="${FORWARD_FRAMES}x" ./lab/emulation/afpacket | tee bench-out/forward.txt
# Ratio of the forwarder's delivered packet rate to the bridge's, per frame size.
awk '/^BenchmarkForward\// {
	split($1, parts, "/"); mode = parts[2]; size = parts[3]; sub(/-[0-9]+$/, "", size)
	for (i = 2; i <= NF; i++) if ($(i+1) == "pps") pps[mode, size] = $i
	sizes[size] = 1
}
END {
	for (s in sizes) if ((("forwarder", s) in pps) && (("bridge", s) in pps))
		printf "ratio forwarder/bridge at %s: %.2f (%.0f vs %.0f pps)\n", s, pps["forwarder", s] / pps["bridge", s], pps["forwarder", s], pps["bridge", s]
}' bench-out/forward.txt

echo
echo "== deploy + destroy of ai-zone-64 (netns runtime, the built binary)"
bin=bench-out/rocelab
CGO_ENABLED=0 go build -o "$bin" ./cmd/rocelab
lab="bench$$"
t0=$(date +%s.%N)
"$bin" deploy -t ai-zone-64 --name "$lab" >/dev/null
t1=$(date +%s.%N)
"$bin" destroy --name "$lab" >/dev/null
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "ai-zone-64: deploy %.2f s, destroy %.2f s\n", b - a, c - b }' | tee bench-out/deploy.txt
