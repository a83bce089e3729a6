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
# BenchmarkForward moves real frames between namespaces and BenchmarkDeploy
# builds whole labs: they run below with fixed counts instead of the default
# calibration.
go test -run='^$' -bench=. -skip='^Benchmark(Forward|Deploy)$' -benchmem -benchtime="$BENCHTIME" $pkgs | tee bench-out/bench.txt

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
DEPLOY_RUNS="${DEPLOY_RUNS:-3}"
echo "== deploy + destroy (netns runtime, mean of $DEPLOY_RUNS each): laptop and ai-zone-64"
go test -run='^$' -bench='^BenchmarkDeploy$' -benchtime="${DEPLOY_RUNS}x" ./lab/emulation/deploy | tee bench-out/deploy.txt
awk '/^BenchmarkDeploy\// {
	split($1, parts, "/"); topo = parts[2]; sub(/-[0-9]+$/, "", topo)
	for (i = 2; i <= NF; i++) { if ($(i+1) == "deploy-s") d = $i; if ($(i+1) == "destroy-s") x = $i }
	printf "%s: deploy %.2f s, destroy %.2f s\n", topo, d, x
}' bench-out/deploy.txt
