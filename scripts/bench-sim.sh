#!/usr/bin/env bash
# make bench-sim: the simulator at data-center scale, side by side in one
# run. Each scenario runs on one core (GOMAXPROCS=1, one worker) and on
# two (GOMAXPROCS=2, two workers); with
# BASELINE=<git revision>, that revision's simbench runs first, one core,
# so the simulator is measured against its previous self on the same
# machine state. Prints wall time, data packets per wall-second, peak RSS
# and the digest of every run, then a table; fails when a digest differs
# between worker counts or from the baseline's. Logs go to bench-out/.
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
