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
# BenchmarkForward and BenchmarkThroughput move real frames between
# namespaces and BenchmarkDeploy, BenchmarkCapacity and BenchmarkNodeStart build whole labs: they run below with
# fixed counts instead of the default calibration.
go test -run='^$' -bench=. -skip='^Benchmark(Forward|Throughput|Deploy|Capacity|NodeStart)$' -benchmem -benchtime="$BENCHTIME" $pkgs | tee bench-out/bench.txt

echo
echo "== forwarder, tuned forwarder and switch node vs Linux bridge on the same veths"
if [ "$(id -u)" != 0 ]; then
	echo "(needs root: skipped)"
	exit 0
fi
# Throughput (RFC 2544 with a 1 % loss allowance): the highest rate a paced
# generator offers at which the sink gets >= 99 % of the frames; then the
# same chains under overload (the generator as fast as it can).
go test -run='^$' -bench='^Benchmark(Throughput|Forward)$' -benchtime="${FORWARD_FRAMES}x" ./lab/emulation/datapath/afpacket | tee bench-out/forward.txt
# Each middle's figure against the two bridges', per frame size.
awk '/^Benchmark(Throughput|Forward)\// {
	split($1, parts, "/"); bench = parts[1]; sub(/^Benchmark/, "", bench)
	mode = parts[2]; size = parts[3]; sub(/-[0-9]+$/, "", size)
	key = (bench == "Throughput") ? "lossless-pps" : "pps"
	for (i = 2; i <= NF; i++) { if ($(i+1) == key) v[bench, mode, size] = $i; if ($(i+1) == "loss%") l[bench, mode, size] = $i }
	if (!((bench, mode) in seen)) { seen[bench, mode] = 1; modes[bench] = modes[bench] " " mode }
	if (!(size in seensize)) { seensize[size] = 1; sizes = sizes " " size }
}
END {
	ns = split(sizes, ss, " ")
	split("Throughput Forward", benches, " ")
	for (b = 1; b <= 2; b++) {
		bench = benches[b]
		print (bench == "Throughput") ? "throughput (frames/s at <= 1 % loss) against the bridge (netfilter calls on, the default) and the bridge with them off:" : "under overload (delivered frames/s, loss) against the same two bridges:"
		n = split(modes[bench], ms, " ")
		for (k = 1; k <= ns; k++) for (j = 1; j <= n; j++) {
			s = ss[k]; m = ms[j]
			if (m ~ /^bridge/ || !((bench, m, s) in v) || !((bench, "bridge", s) in v) || !((bench, "bridge-nonf", s) in v)) continue
			printf "  %-16s %6s: %.2f x bridge, %.2f x bridge-nonf (%.0f vs %.0f and %.0f; loss %s%%)\n", m, s, v[bench, m, s] / v[bench, "bridge", s], v[bench, m, s] / v[bench, "bridge-nonf", s], v[bench, m, s], v[bench, "bridge", s], v[bench, "bridge-nonf", s], l[bench, m, s]
		}
	}
}' bench-out/forward.txt

echo
echo "== the laptop demo's emulation: loop lag and lossless capacity, before and after (k from scale: auto at 20,000 and at DefaultCapacityPPSPerCPU frames/s per CPU), and in one node group (DefaultGroupCapacityPPS)"
go test -run='^$' -bench='^BenchmarkCapacity$' -benchtime=1x -timeout=30m ./lab/emulation/tools/demo | tee bench-out/capacity.txt
awk '/^BenchmarkCapacity\// {
	split($1, parts, "/"); c = parts[2]; sub(/-[0-9]+$/, "", c)
	for (i = 2; i <= NF; i++) v[c, $(i+1)] = $i
}
END {
	for (j = 1; j <= 3; j++) {
		c = (j == 1) ? "before" : (j == 2) ? "after" : "one-group"
		printf "%-9s (auto assumes %d frames/s per CPU) k = %5d: lossless drops %d, incast %.0f Gb/s, loop lag p50 / p99 / max %.0f / %.0f / %.0f us wall (p99 %.0f ns of fabric time), %.1f us CPU per frame, %.0f wake-ups/s\n", c, v[c, "assumed-pps/cpu"], v[c, "k"], v[c, "lossless-drops"], v[c, "incast-Gb/s"], v[c, "lag-p50-us"], v[c, "lag-p99-us"], v[c, "lag-max-us"], v[c, "lag-p99-fabric-ns"], v[c, "cpu-us/frame"], v[c, "wakeups/s"]
	}
	printf "lossless capacity per CPU, measured: %.0f frames/s (smallest lossless k %d, %d probes)\n", v["search", "lossless-pps/cpu"], v["search", "min-k"], v["search", "probes"]
	printf "one node group (links in memory): smallest lossless and on-time k %d (%.0f frames/s at full load for the lab, %d probes)\n", v["search-one-group", "min-k"], v["search-one-group", "lab-pps"], v["search-one-group", "probes"]
}' bench-out/capacity.txt

echo
DEPLOY_RUNS="${DEPLOY_RUNS:-3}"
echo "== deploy + destroy (netns runtime, mean of $DEPLOY_RUNS each): laptop and ai-zone-64, and ai-zone-64 in two node groups"
go test -run='^$' -bench='^BenchmarkDeploy$' -benchtime="${DEPLOY_RUNS}x" ./lab/emulation/control/deploy | tee bench-out/deploy.txt
awk '/^BenchmarkDeploy\// {
	split($1, parts, "/"); topo = parts[2]; sub(/-[0-9]+$/, "", topo)
	for (i = 2; i <= NF; i++) { if ($(i+1) == "deploy-s") d = $i; if ($(i+1) == "destroy-s") x = $i }
	printf "%s: deploy %.2f s, destroy %.2f s\n", topo, d, x
}' bench-out/deploy.txt

echo
echo "== a node process's start: exec in its namespace to its first /health ok (laptop lab, 40 restarts)"
go test -run='^$' -bench='^BenchmarkNodeStart$' -benchtime=40x ./lab/emulation/control/deploy | tee bench-out/nodestart.txt
awk '/^BenchmarkNodeStart/ {
	for (i = 2; i <= NF; i++) v[$(i+1)] = $i
	printf "node start: mean %.1f ms, median %.1f ms, slowest %.1f ms\n", v["start-ms"], v["start-p50-ms"], v["start-max-ms"]
}' bench-out/nodestart.txt

echo
# The emulation's per-hop cost against an earlier tree, in one run: both
# builds probe the laptop demo at the same k, alternated, so that the
# machine's state is shared (BASELINE: a commit; default the tree before
# the receive-side link delay).
BASELINE="${BASELINE:-56f18ab}"
PROBE_K="${PROBE_K:-2000}"
ROUNDS="${ROUNDS:-2}"
echo "== the laptop demo's loops at k = $PROBE_K: this tree against $BASELINE, alternated, $ROUNDS rounds"
base_dir=$(mktemp -d)
trap 'git worktree remove --force "$base_dir/src" >/dev/null 2>&1; rm -rf "$base_dir"' EXIT
git worktree add --detach "$base_dir/src" "$BASELINE" >/dev/null 2>&1
(cd "$base_dir/src" && go build -o "$base_dir/bin/rocelab" ./cmd/rocelab && go build -o "$base_dir/bin/rocelab-node" ./cmd/rocelab-node)
mkdir -p "$base_dir/now"
go build -o "$base_dir/now/rocelab" ./cmd/rocelab && go build -o "$base_dir/now/rocelab-node" ./cmd/rocelab-node
# Then this tree as the demo runs it (its nodes in one node group, a
# process whose members share one loop, their links in memory), with a
# process per node (exact links, loops running ahead; and plain links,
# --exact-links=false), in one group whose links go through their veths
# (--socket-links), and in two groups. The baseline runs with its own
# defaults (a process per node).
for r in $(seq "$ROUNDS"); do
	for v in bin now now:0 now:plain now:1s now:2; do
		dir=${v%%:*}
		variant=${v#*:}
		[ "$v" = "$dir" ] && variant=""
		label=$([ "$dir" = bin ] && echo "$BASELINE" || echo "this tree")
		[ "$v" = now ] && label="this tree, one node group (the demo's default)"
		flags=()
		case "$variant" in
		0) label="$label, a process per node"; flags=(--node-groups 0) ;;
		plain) label="$label, a process per node, plain links"; flags=(--node-groups 0 --exact-links=false) ;;
		1s) label="$label, 1 node group, links through their veths"; flags=(--node-groups 1 --socket-links) ;;
		[0-9]*) label="$label, $variant node groups"; flags=(--node-groups "$variant") ;;
		esac
		line=$("$base_dir/$dir/rocelab" demo --capacity --start "$PROBE_K" --min "$PROBE_K" --max "$PROBE_K" --name "bench-$dir$variant" "${flags[@]}" 2>&1 | grep "^# k=" || true)
		echo "round $r, $label (load $(cut -d' ' -f1 /proc/loadavg)): ${line#\# }"
	done
done
