#!/usr/bin/env bash
# make demo: the most complete thing rocelab does today, on the built-in
# default topology (topologies/laptop.yaml). It grows as the lab grows.
set -euo pipefail
BIN="${1:-bin/rocelab}"
OUT="${2:-demo-out}"
mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "0. The emulation lab: deploy laptop.yaml, run an all-reduce and an incast, destroy"
if [ "$(id -u)" = 0 ]; then
	"$BIN" demo --name "demo-$$"
else
	cat <<'MSG'
(skipped: the emulation lab needs root, to create network namespaces, veth
 pairs and raw sockets. Run `make demo` as root — e.g. `sudo make demo`, or
 from a root shell. Steps 1–6 below need no root.)
MSG
fi

step "1. Validate the default topology (laptop.yaml)"
"$BIN" validate

step "2. Its ports, addresses and interface names"
"$BIN" topo show >"$OUT/ports.txt"
head -20 "$OUT/ports.txt"
echo "   … (full table: $BIN topo show)"

step "3. Draw it: $OUT/laptop.svg"
"$BIN" graph -f svg -w "$OUT/laptop.svg"

step "4. A generated 64-host AI zone (8 GPUs each, 8 rack switches), validated"
"$BIN" topo gen clos --hosts 64 --rtsw 8 -w "$OUT/zone64.yaml"
"$BIN" validate "$OUT/zone64.yaml"

step "5. One frame of every packet type the lab emits: $OUT/samples.pcap"
"$BIN" wire samples -w "$OUT/samples.pcap"
"$BIN" wire decode "$OUT/samples.pcap"

if command -v tshark >/dev/null; then
	step "6. What Wireshark makes of them"
	# rpcrdma_infiniband: a heuristic that misreads some SEND payloads as RPC-over-RDMA.
	tshark --disable-heuristic rpcrdma_infiniband -r "$OUT/samples.pcap" >"$OUT/samples.tshark.txt" 2>/dev/null
	cat "$OUT/samples.tshark.txt"
else
	step "6. (install tshark to see Wireshark's decoding of $OUT/samples.pcap)"
fi

step "7. The MetaRoCE compliance suite against the reference endpoint (in process)"
"$BIN" compliance --junit "$OUT/compliance.xml" | tail -3

cat <<MSG

To watch a lab live: rocelab deploy; rocelab dashboard (as root), then open
http://127.0.0.1:9464/ — or replay a report: rocelab run --sim FILE --report DIR;
rocelab dashboard --replay DIR.
MSG
printf '\nDone. Outputs are in %s/.\n' "$OUT"
