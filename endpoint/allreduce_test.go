package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
	"github.com/rocelab/rocelab/topologies"
)

// TestRingAllReduceBusBW: a ring all-reduce over the 8 GPUs of laptop.yaml
// (4 hosts × 2 GPUs at 400G, 2 leaves, 2 spines, non-blocking) through the
// RDMA adapter, RoCEv2 RC, real bytes (Raw NICs, ICRC checked), every
// element verified (#wrong = 0).
//
// The most busbw the line rate and the headers allow, per 512 KiB slice
// (128 packets of 4096 B payload):
//
//	per packet: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
//	            + preamble 8 + IFG 12 = 82 B
//	per slice:  RETH 16 on the first packet, ImmDt 4 on the last, and the
//	            adapter's offset announcement (a zero-length WRITE with
//	            immediate: 14+20+8+12+16+4+4 = 78 B frame + 4 FCS + 20 = 102 B)
//	efficiency = 524288 / (524288 + 128·82 + 16 + 4 + 102)
//	           = 524288 / 534906 = 0.98015
//	busbw_max  = 400 Gb/s / 8 × 0.98015 = 49.01 GB/s
//
// busbw must be within 5% of it (≥ 46.56 GB/s). 32 MiB: the ring's
// pipeline fill (one slice per step) costs about 14 slices of 56 per
// rank. About 5 s of wall time (real bytes, CRCs).
func TestRingAllReduceBusBW(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	e := sim.New(1)
	nics, _ := fabricNICs(t, e, topo, true)
	if len(nics) != 8 {
		t.Fatalf("%d GPU NICs, want 8", len(nics))
	}
	tr, err := rdmacomm.New(rdmacomm.Options{NICs: nics, QP: endpoint.QPConfig{Mode: endpoint.ModeRoCEv2}})
	if err != nil {
		t.Fatal(err)
	}
	comm, err := collective.New(e, tr, collective.Config{Ranks: 8, Check: true, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	res := runCollective(t, e, comm, collective.AllReduce, 32<<20, 1, 1)
	const eff = 524288.0 / (524288 + 128*82 + 16 + 4 + 102)
	maxBW := 400.0 / 8 * eff
	t.Logf("all_reduce 32 MiB on 8×400G: %.1f us, algbw %.2f GB/s, busbw %.2f GB/s (max %.2f, %.1f%%), #wrong %d",
		res.TimeUs, res.AlgBW, res.BusBW, maxBW, 100*res.BusBW/maxBW, res.Wrong)
	if !res.Checked || res.Wrong != 0 {
		t.Errorf("checked %t, %d wrong elements", res.Checked, res.Wrong)
	}
	if res.BusBW < 0.95*maxBW || res.BusBW > maxBW*1.001 {
		t.Errorf("busbw %.2f GB/s, want within 5%% below %.2f", res.BusBW, maxBW)
	}
}
