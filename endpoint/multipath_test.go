package endpoint_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/clock"
	"github.com/rocelab/rocelab/lab/fabric"
	"github.com/rocelab/rocelab/lab/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// closYAML is a non-blocking 2-tier Clos: 4 leaves × 4 spines, 4 hosts of
// one 100G GPU NIC per leaf (4 down, 4 up per leaf).
const closYAML = `
name: clos16
defaults:
  be: {rate: 100G, delay: 1us, mtu: 4200}
generate:
  hosts: 16
  gpus: 1
  rtsw: 4
  ctsw: 4
  fe: off
`

// fabricNICs builds topo in the simulator with one endpoint NIC per GPU
// port (in node order), Raw as asked.
func fabricNICs(t testing.TB, e *sim.Engine, topo *topologies.Topology, raw bool) ([]*endpoint.NIC, *fabric.SimFabric) {
	t.Helper()
	return fabricNICsOpts(t, e, topo, raw, fabric.SimOptions{})
}

// fabricNICsOpts is fabricNICs with the fabric's options.
func fabricNICsOpts(t testing.TB, e *sim.Engine, topo *topologies.Topology, raw bool, so fabric.SimOptions) ([]*endpoint.NIC, *fabric.SimFabric) {
	t.Helper()
	f, err := fabric.BuildSim(e, topo, so)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry()
	var nics []*endpoint.NIC
	for _, n := range topo.Nodes {
		if n.Kind != topologies.KindHost {
			continue
		}
		for g := range n.GPUs {
			p := n.Port(fmt.Sprintf("gpu%d", g))
			var mac [6]byte
			copy(mac[:], p.MAC)
			nic, err := endpoint.NewNIC(endpoint.Options{Name: n.Name + ":" + p.Name, Sched: e, Rand: e.Rand("nic/" + n.Name + p.Name),
				LineRate: p.Rate, IP: p.Addr.Addr(), MAC: mac, Raw: raw, CC: reg})
			if err != nil {
				t.Fatal(err)
			}
			out, err := f.Attach(n.Name, p.Name, nic)
			if err != nil {
				t.Fatal(err)
			}
			nic.Attach(out)
			nics = append(nics, nic)
		}
	}
	return nics, f
}

// permutation returns a seeded permutation of n hosts (perLeaf per leaf)
// where nobody sends to a host on its own leaf.
func permutation(seed uint64, n, perLeaf int) []int {
	r := rand.New(rand.NewPCG(seed, 0xc105))
	for {
		p := r.Perm(n)
		ok := true
		for i, d := range p {
			if i/perLeaf == d/perLeaf {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
}

// permutationRates streams WRITEs from every host to its permutation peer
// for dur and returns each flow's goodput (Gb/s) after warm.
func permutationRates(t *testing.T, seed uint64, cfg endpoint.QPConfig, warm, dur clock.Duration) []float64 {
	t.Helper()
	return permutationRatesOpts(t, seed, cfg, false, warm, dur)
}

// permutationRatesOpts is permutationRates; spray makes every switch
// spray RoCE data (DSCP 26) packet by packet, round-robin over its equal-cost
// next hops, instead of hashing the 5-tuple.
func permutationRatesOpts(t *testing.T, seed uint64, cfg endpoint.QPConfig, spray bool, warm, dur clock.Duration) []float64 {
	t.Helper()
	var so fabric.SimOptions
	if spray {
		so.Configure = func(_ *topologies.Node, c *switchmodel.Config) { c.ECMP.SprayDSCPs = []uint8{26} }
	}
	topo, err := topologies.Parse("clos16.yaml", []byte(closYAML))
	if err != nil {
		t.Fatal(err)
	}
	e := sim.New(seed)
	nics, _ := fabricNICsOpts(t, e, topo, false, so)
	perm := permutation(seed, len(nics), 4)
	var rx []*endpoint.QP
	for i, d := range perm {
		a, b := connect(t, nics[i], nics[d], cfg, cfg)
		rx = append(rx, b.qp)
		lmr, _ := a.pd.RegMRLen(1<<20, allAccess)
		rmr, _ := b.pd.RegMRLen(1<<20, allAccess)
		post := func() {
			if err := a.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRWrite, Signaled: true,
				Local: endpoint.SGE{Addr: lmr.Addr, Length: 1 << 20, LKey: lmr.LKey}, RemoteAddr: rmr.Addr, RKey: rmr.RKey}); err != nil {
				t.Fatal(err)
			}
		}
		a.scq.OnCompletion(func(wc endpoint.WC) {
			if wc.Status != endpoint.StatusSuccess {
				t.Fatalf("completion %v: %v", wc.Status, wc.Err)
			}
			if e.Now() < clock.Time(dur) {
				post()
			}
		})
		for range 8 {
			post()
		}
	}
	e.RunUntil(clock.Time(warm))
	start := make([]int64, len(rx))
	for i, q := range rx {
		start[i] = q.Stats().RxDataBytes
	}
	e.RunUntil(clock.Time(dur))
	var rates []float64
	for i, q := range rx {
		rates = append(rates, float64(q.Stats().RxDataBytes-start[i])*8/(dur-warm).Seconds()/1e9)
	}
	return rates
}

// TestMultipathPermutation: permutation traffic (every host to a host on
// another leaf, seeded) on a non-blocking 4×4 Clos at 100G. Single-path
// RoCEv2 (ECMP on the 5-tuple) collides: some flows share a leaf uplink
// or spine downlink and the worst flow gets about a third of the line
// rate. MetaRoCE sprays over 16 paths with per-path DCQCN and a path
// scheduler weighted by each path's rate (paths.go pickPath): worst 82.6,
// median 94.4 Gb/s (round-robin spraying: worst 56.9, median 70.1).
// KNOWN SHORTFALL (issue 4): the target is the worst flow within 10% of
// the line rate (≥ 90 Gb/s of payload; 98 Gb/s is the most 4 KiB payloads
// leave of 100G); one flow stays at ≈ 83. Not helping: re-rolling the
// source port of a path whose rate fell below 1/4 (or 1/2) of the QP's
// fastest path (worst 59.8 / 68.0); switch-side per-packet spraying of
// DSCP 26 (worst 45.8: it reorders inside a path, which MetaRoCE's per-path
// FIFO loss inference reads as loss). The test asserts the collision, the
// weighted scheduler's floor (worst ≥ 80, median ≥ 90) and logs the gap.
// 6 ms of virtual time, 2 ms warm-up; about 5 s of wall time.
func TestMultipathPermutation(t *testing.T) {
	const warm, dur = 2 * clock.Millisecond, 6 * clock.Millisecond
	single := permutationRates(t, 7, endpoint.QPConfig{Mode: endpoint.ModeRoCEv2, CC: "dcqcn", Paths: 1}, warm, dur)
	multi := permutationRates(t, 7, endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE, CC: "dcqcn", Paths: 16}, warm, dur)
	t.Logf("single-path ECMP: worst %.1f Gb/s, median %.1f Gb/s, flows %.1f", minOf(single), median(single), single)
	t.Logf("MetaRoCE 16 paths: worst %.1f Gb/s, median %.1f Gb/s, flows %.1f", minOf(multi), median(multi), multi)
	if w := minOf(single); w > 55 {
		t.Errorf("single-path worst flow %.1f Gb/s: no ECMP collision with this seed (want <= ~50)", w)
	}
	if minOf(multi) <= minOf(single) {
		t.Errorf("MetaRoCE worst flow %.1f Gb/s does not beat single-path's %.1f", minOf(multi), minOf(single))
	}
	if w, m := minOf(multi), median(multi); w < 80 || m < 90 {
		t.Errorf("MetaRoCE worst %.1f / median %.1f Gb/s, want >= 80 / 90", w, m)
	}
	if w := minOf(multi); w < 90 {
		t.Logf("KNOWN SHORTFALL: MetaRoCE worst flow %.1f Gb/s, target >= 90 (within 10%% of 100G)", w)
	}
}
