#!/usr/bin/env bash
# make example-plots: regenerate the README's example plots
# (docs/img/examples/*.svg) from the example scenarios, in the simulator.
# Usage: scripts/example-plots.sh [BIN]
set -euo pipefail
BIN="${1:-bin/rocelab}"
DEST=docs/img/examples
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# plot SCENARIO PLOT NAME: run SCENARIO (once per scenario) and copy its
# plots/PLOT.svg to $DEST/NAME.svg.
plot() {
	local scen="$1" plot="$2" name="$3" out
	out="$tmp/$(echo "$scen" | tr '/.' '__')"
	if [ ! -d "$out" ]; then
		# The report is the point, not the verdict: keep going on exit 1.
		"$BIN" run --sim "$scen" --report "$out" >"$out.log" 2>&1 || [ $? = 1 ] || { cat "$out.log"; exit 1; }
	fi
	cp "$out/plots/$plot.svg" "$DEST/$name.svg"
	echo "$DEST/$name.svg  <- $scen plots/$plot.svg"
}

plot examples/01-incast-hol/scenario.yaml queues 01-incast-hol-queues
plot examples/01-incast-hol/scenario.yaml pfc 01-incast-hol-pfc
plot examples/04-ecmp/5tuple.yaml flows 04-ecmp-5tuple-flows
plot examples/04-ecmp/spray.yaml flows 04-ecmp-spray-flows
