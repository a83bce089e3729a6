#!/usr/bin/env bash
# make bench-sim: the simulator at data-center scale, side by side in one
# run. Each scenario runs on one core (GOMAXPROCS=1, one worker) and on
# two (GOMAXPROCS=2, two workers); with
# BASELINE=<git revision>, that revision's simbench runs first, one core,
# so the simulator is measured against its previous self on the same
# machine state. Prints wall time, data packets per wall-second, peak RSS
# and the digest of every run, then a table; fails when a digest differs
# between worker counts or from the baseline's. Logs go to bench-out/.
#
# With HTSIM=<path to htsim_roce> (Broadcom/csg-htsim, built from
# sim/ and sim/datacenter), it then runs htsim_roce's 1,024-node
# permutation of 2,000,000-byte flows (the issue-27 command, its matrix
# from the gen_permutation.py beside it) and simbench's permutation-ecmp,
# alternated for ROUNDS rounds (default 3), each with `uptime`, and
# prints packets per second over htsim's and peak RSS over htsim's.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-out bin
go build -o bin/simbench ./cmd/simbench
SCENARIOS="${SCENARIOS:-permutation-ecmp permutation-spray allreduce}"
base=""
if [ -n "${BASELINE:-}" ]; then
	tree=$(mktemp -d)
	trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
	git worktree add -q --detach "$tree" "$BASELINE"
	(cd "$tree" && go build -o "$OLDPWD/bin/simbench-base" ./cmd/simbench)
	base=bin/simbench-base
	echo "baseline: $BASELINE ($(git rev-parse --short "$BASELINE"))"
fi

# run LABEL PROCS BINARY ARGS...: one scenario in its own process.
run() {
	local label=$1 procs=$2 bin=$3
	shift 3
	local log="bench-out/sim-${label// /-}.txt"
	echo "== $label: $(uptime | sed 's/.*load/load/')"
	GOMAXPROCS=$procs "$bin" "$@" | tee "$log"
	awk -v label="$label" '
		/^run wall/ { wall = $3; sub(/,$/, "", wall) }
		/^data packets/ { pps = $4; sub(/\(/, "", pps) }
		/^peak RSS/ { rss = $3 }
		/^digest/ { digest = $2 }
		END { printf "%-34s %10s %14s %9s MB  %s\n", label, wall, pps, rss, substr(digest, 1, 16) }
	' "$log" >> bench-out/sim-table.txt
}

: > bench-out/sim-table.txt
for s in $SCENARIOS; do
	if [ -n "$base" ]; then
		# A baseline that has -workers runs on one, as "1 worker" below.
		one=""
		if "$base" -h 2>&1 | grep -q -- -workers; then one="-workers 1"; fi
		run "$s baseline 1 worker" 1 "$base" -scenario "$s" $one
	fi
	run "$s 1 worker" 1 bin/simbench -scenario "$s" -workers 1
	run "$s 2 workers" 2 bin/simbench -scenario "$s" -workers 2
done

echo
printf "%-34s %10s %14s %9s     %s\n" "run" "wall" "data pkts/s" "peak RSS" "digest"
cat bench-out/sim-table.txt
# Every run of a scenario must give one digest.
awk '{ s = $1; d = $NF; if (s in seen && seen[s] != d) { print "digest of " s " differs: " seen[s] " and " d; bad = 1 } seen[s] = d } END { exit bad }' bench-out/sim-table.txt

if [ -z "${HTSIM:-}" ]; then
	exit 0
fi
# htsim_roce against simbench, alternated, whole process each.
htsim_dir=$(cd "$(dirname "$HTSIM")" && pwd)
matrix="$htsim_dir/connection_matrices/perm_1024n_1024c_0u_2000000b.cm"
if [ ! -f "$matrix" ]; then
	(cd "$htsim_dir/connection_matrices" && python3 gen_permutation.py "$matrix" 1024 1024 2000000 0 13 >/dev/null)
fi
# htsim's data packets: 1,024 flows of ceil(2,000,000 / 4,096) packets.
htsim_packets=$((1024 * ((2000000 + 4095) / 4096)))
# timed LOG CMD...: wall seconds and peak RSS (KB) of CMD into LOG's last line.
timed() {
	local log=$1
	shift
	/usr/bin/time -f "timed %e %M" "$@" >"$log" 2>&1 || { tail -5 "$log"; return 1; }
}
: > bench-out/htsim-table.txt
for round in $(seq 1 "${ROUNDS:-3}"); do
	load=$(uptime | sed 's/.*load average: //')
	echo "== round $round: load $load"
	(cd "$htsim_dir/connection_matrices" && timed "$OLDPWD/bench-out/htsim-$round.txt" "$HTSIM" -nodes 1024 -tm "$matrix" \
		-queue_type lossless_input -strat ecmp_host -paths 1 -pfc_thresholds 12 15 -mtu 4096 -seed 13 -end 5000)
	GOMAXPROCS=1 timed "bench-out/htsim-sim1-$round.txt" bin/simbench -scenario permutation-ecmp -workers 1
	GOMAXPROCS=2 timed "bench-out/htsim-sim2-$round.txt" bin/simbench -scenario permutation-ecmp -workers 2
	read -r _ hw hr < <(tail -1 "bench-out/htsim-$round.txt")
	read -r _ w1 r1 < <(tail -1 "bench-out/htsim-sim1-$round.txt")
	read -r _ w2 r2 < <(tail -1 "bench-out/htsim-sim2-$round.txt")
	pk=$(awk '/^data packets/ { print $3 }' "bench-out/htsim-sim1-$round.txt")
	awk -v r="$round" -v load="$load" -v hw="$hw" -v hr="$hr" -v w1="$w1" -v r1="$r1" -v w2="$w2" -v r2="$r2" -v pk="$pk" -v hp="$htsim_packets" 'BEGIN {
		h = hp / hw
		printf "%s | %s | %.2f s, %d MB | %.2f s, %d MB | %.2f s, %d MB | %.2fx | %.2fx | %.2fx\n", r, load, hw, hr / 1024, w1, r1 / 1024, w2, r2 / 1024, pk / w1 / h, pk / w2 / h, r1 / hr
	}' | tee -a bench-out/htsim-table.txt
done
echo
echo "round | load | htsim_roce | simbench 1 worker | 2 workers | packets/s over htsim's, 1 worker | 2 workers | peak RSS over htsim's (1 worker)"
cat bench-out/htsim-table.txt
