#!/usr/bin/env bash
# gen-transformer-trace.sh OUTDIR: Chakra execution traces of one training
# step of a small transformer, generated with ASTRA-sim's
# symbolic_tensor_graph (STG), for rocelab's replay (issue 52):
#
#   OUTDIR/laptop/transformer.RANK.et      8 ranks: GPT, DP=2 TP=2 PP=2
#   OUTDIR/ai-zone-64/transformer.RANK.et  64 ranks: MoE, DP=2 TP=4 EP=4 PP=2
#
# plus STG's process-group file transformer.json beside each (pg_name →
# ranks). examples/09-chakra/transformer/ holds the output of this script;
# GENERATED.md there says what is in it.
#
# It downloads nothing. It needs two source trees, given as arguments or
# in the environment:
#
#   STG_SRC     https://github.com/astra-sim/symbolic_tensor_graph
#               (used: 3a7f49c02ac3eb669e4eee597ef1a32f7db44d07)
#   CHAKRA_SRC  https://github.com/mlcommons/chakra — only its
#               schema/protobuf/et_def.proto is used
#               (used: 21585d8f2d65603d791d2121e3d4632351120262)
#
#   git clone https://github.com/astra-sim/symbolic_tensor_graph stg
#   git clone https://github.com/mlcommons/chakra chakra
#   scripts/gen-transformer-trace.sh out/ stg chakra
#
# It runs Debian's python3 (PYTHON to override) with Debian's packages:
# python3-sympy python3-numpy python3-pandas python3-networkx
# python3-graphviz python3-tqdm python3-protobuf and protobuf-compiler.
# Run as root, it apt-get installs the missing ones; otherwise it names
# them and stops. No pip.
#
# STG is run from a scratch copy (it writes a cache into its own tree),
# in which the script
#   - replaces STG's vendored et_def_pb2.py (Chakra schema 0.0.4) with one
#     compiled by protoc from Chakra's et_def.proto (the two .proto files
#     are identical at the commits above; the script stops if they differ);
#   - removes, in main.py's "moe" branch, the second
#     ReplicateGraph(Batch→MicroBatch) after MicroBatchReplicator: it
#     rewrites the op_attr strings a second time ("(MicroBatch)" becomes
#     "(Micro(MicroBatch))") and every MoE run fails with "Cannot convert
#     expression to float". The symbol shapes already say MicroBatch, so
#     dropping it changes nothing else. The script stops if main.py no
#     longer has that code.
# and seeds Python's random with 0 (STG draws the first send/recv comm_tag
# at random) and sets PYTHONHASHSEED=0, so that a run gives the same bytes.
# A run takes about half a minute.
set -euo pipefail

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 3 ] || usage
case $1 in -h | --help) usage ;; esac
out=$1
stg=${2:-${STG_SRC:-}}
chakra=${3:-${CHAKRA_SRC:-}}
[ -n "$stg" ] && [ -n "$chakra" ] || {
	echo "gen-transformer-trace: give the symbolic_tensor_graph and chakra source folders (arguments 2 and 3, or STG_SRC and CHAKRA_SRC)" >&2
	exit 2
}
[ -f "$stg/main.py" ] && [ -d "$stg/symbolic_tensor_graph" ] || {
	echo "gen-transformer-trace: $stg is not a symbolic_tensor_graph checkout (no main.py, symbolic_tensor_graph/)" >&2
	exit 2
}
proto="$chakra/schema/protobuf/et_def.proto"
[ -f "$proto" ] || {
	echo "gen-transformer-trace: $chakra is not a chakra checkout (no schema/protobuf/et_def.proto)" >&2
	exit 2
}
PYTHON=${PYTHON:-/usr/bin/python3}

# Debian packages: install the missing ones as root, else name them.
pkgs="python3-sympy python3-numpy python3-pandas python3-networkx python3-graphviz python3-tqdm python3-protobuf protobuf-compiler"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "installing:$missing"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
	else
		echo "gen-transformer-trace: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
		exit 1
	fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$stg" "$work/stg"
rm -rf "$work/stg/.git" "$work/stg/generated"

# Chakra's schema, compiled here, in place of STG's vendored copy.
vendored="$work/stg/symbolic_tensor_graph/chakra/backends/chakra_00_4_backend/et_def"
if ! cmp -s "$proto" "$vendored/et_def.proto"; then
	echo "gen-transformer-trace: Chakra's et_def.proto differs from the one STG vendors ($vendored/et_def.proto); check the two commits" >&2
	exit 1
fi
mkdir -p "$work/pb"
protoc -I "$(dirname "$proto")" --python_out="$work/pb" "$proto"
cp "$work/pb/et_def_pb2.py" "$vendored/et_def_pb2.py"

# The MoE branch's redundant second Batch→MicroBatch replication.
"$PYTHON" - "$work/stg/main.py" <<'EOF'
import sys
path = sys.argv[1]
src = open(path).read()
old = '''            assert False, "disable for now"
        transformer_moe = ReplicateGraph.apply(
            transformer_moe,
            inplace=True,
            old_symbol_map_new_symbol={"Batch": "MicroBatch"},
        )
'''
if src.count(old) != 1:
    sys.exit("gen-transformer-trace: main.py's moe branch is not the one this script patches; check the symbolic_tensor_graph commit")
open(path, "w").write(src.replace(old, '''            assert False, "disable for now"
'''))
EOF

# stg_run NAME ARGS...: one run of main.py into $out/NAME.
stg_run() {
	local name=$1
	shift
	rm -rf "${out:?}/$name"
	mkdir -p "$out/$name"
	echo "== $name: main.py $*"
	(cd "$work/stg" && PYTHONHASHSEED=0 PYTHONPATH="$work/pb" "$PYTHON" -c '
import random, runpy, sys
random.seed(0)
sys.argv = ["main.py"] + sys.argv[1:]
runpy.run_path("main.py", run_name="__main__")
' --output_dir "$out/$name" --output_name 'transformer.%d.et' "$@") >"$work/$name.log" 2>&1 || {
		tail -n 30 "$work/$name.log" >&2
		echo "gen-transformer-trace: symbolic_tensor_graph failed for $name" >&2
		exit 1
	}
	echo "   $(find "$out/$name" -name '*.et' | wc -l) ranks, $(du -sb "$out/$name" | cut -f1) bytes"
}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The laptop lab: 4 hosts × 2 GPU NICs = 8 ranks. A GPT of 4 layers
# (2 per pipeline stage), batch 8 in 4 micro-batches of 2.
stg_run laptop --model_type gpt \
	--dp 2 --tp 2 --pp 2 \
	--num_stacks 4 --dmodel 512 --dff 2048 --head 8 --kvhead 8 \
	--seq 1024 --batch 8 --micro_batch 2 --dvocal 8192

# ai-zone-64: 64 ranks of its 512 GPU NICs. A mixture of experts of
# 2 layers (1 per stage), 8 experts, top-2, 2 per expert-parallel rank;
# batch 4 in one micro-batch (kept to one so the 64 files stay < 2 MB).
stg_run ai-zone-64 --model_type moe \
	--dp 2 --tp 4 --ep 4 --pp 2 --experts 8 --kexperts 2 \
	--num_stacks 2 --dmodel 1024 --dff 2048 --head 16 --kvhead 16 \
	--seq 1024 --batch 4 --dvocal 4096

# rocelab's own check, when it is built.
rocelab="$(dirname "$0")/../bin/rocelab"
if [ -x "$rocelab" ]; then
	for name in laptop ai-zone-64; do
		"$rocelab" validate --chakra "$out/$name" --prefix transformer
	done
fi
