package switchmodel_test

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/testbench"
)

// holNet is the two-switch network of the head-of-line blocking test.
type holNet struct {
	e            *sim.Engine
	leaf1, leaf2 *switchmodel.Switch
	a            []*testbench.Host // A0, A1
	b            []*testbench.Host // B1..B6
	v, r, vr     *testbench.Host
	victimRate   float64 // wire bits/s over the window
	victimPrio   int
}

// holRun builds two switches:
//
//	A0, A1, V ─ leaf1 ═400G═ leaf2 ─ B1..B6, R, VR
//
// A0, A1 (on leaf1) and B1..B6 (on leaf2) send an 8:1 incast to R on
// priority 3; the victim V sends to VR, whose port is idle, with DSCP
// victimDSCP. All host links are 100G; every cable is 1 µs. It runs 1.5 ms
// and measures the victim's delivered rate between 0.5 and 1.5 ms.
func holRun(t *testing.T, victimDSCP uint8) *holNet {
	cfg := switchmodel.DefaultConfig()
	cfg.PFC.LosslessPriorities = switchmodel.TCs(3, 4)
	cfg.DSCPToTC[27] = 4
	n := &holNet{e: sim.New(1), victimPrio: int(cfg.DSCPToTC[victimDSCP])}
	e := n.e
	n.leaf1 = newSwitch(t, e, "leaf1", cfg, []clock.Rate{g100, g100, g100, 400 * clock.Gbps}, nil)
	n.leaf2 = newSwitch(t, e, "leaf2", cfg, append([]clock.Rate{400 * clock.Gbps}, rates(8, g100)...), nil)
	cable(e, n.leaf1, 3, n.leaf2, 0)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(n.leaf1.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), 3))
	must(n.leaf2.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), 0))
	const idV, idR, idVR = 2, 20, 21
	for i := range 2 {
		n.a = append(n.a, attachHost(t, e, n.leaf1, i, i))
	}
	n.v = attachHost(t, e, n.leaf1, 2, idV)
	for i := range 6 {
		n.b = append(n.b, attachHost(t, e, n.leaf2, 1+i, 11+i))
	}
	n.r = attachHost(t, e, n.leaf2, 7, idR)
	n.vr = attachHost(t, e, n.leaf2, 8, idVR)

	for i, h := range n.a {
		h.AddFlow(flow(roce(i, idR, 26, uint16(100+i)), 3, -1))
	}
	for i, h := range n.b {
		h.AddFlow(flow(roce(11+i, idR, 26, uint16(200+i)), 3, -1))
	}
	n.v.AddFlow(flow(roce(idV, idVR, victimDSCP, 999), n.victimPrio, -1))

	e.RunUntil(clock.Time(500 * clock.Microsecond))
	start := n.vr.Bytes
	e.RunUntil(clock.Time(1500 * clock.Microsecond))
	n.victimRate = float64(n.vr.Bytes-start) * 8 / 1e-3 * wireLen / pktLen
	return n
}

// TestPFCBackPressureHOL: the incast congests leaf2's port toward R. The
// leaf2 ingress PG of the uplink crosses its threshold and pauses leaf1's
// uplink queue 3; leaf1's ingress PGs of A0, A1 and V then fill and pause
// those hosts: back-pressure spreads hop by hop, with no loss. The victim
// V shares only leaf1's uplink queue 3 with the incast: its own path (the
// 400G uplink, VR's idle port) has room for its 100G, yet it is slowed far
// below line rate (head-of-line blocking). The control run moves the
// victim to priority 4 (also lossless, its own queue): it then gets its
// line rate, 100 Gb/s of wire bytes (the rate here counts wire bytes, so
// an unimpeded victim measures ≈ 100G).
func TestPFCBackPressureHOL(t *testing.T) {
	hol := holRun(t, 26)
	ctl := holRun(t, 27)

	for _, n := range []*holNet{hol, ctl} {
		for _, sw := range []*switchmodel.Switch{n.leaf1, n.leaf2} {
			if d := allDrops(sw); d != 0 {
				t.Errorf("%s dropped %d on lossless priorities", sw.Name(), d)
			}
		}
	}
	// Hop by hop: leaf2 paused leaf1's uplink, leaf1 paused its senders.
	if g := hol.leaf2.Port(0).PG(3); g.XOffFrames == 0 {
		t.Error("leaf2 never paused the uplink from leaf1")
	}
	if q := hol.leaf1.Port(3).Queue(3); q.PFCRx == 0 || q.PausedTime == 0 {
		t.Errorf("leaf1 uplink queue 3: %d PFC received, paused %v", q.PFCRx, q.PausedTime)
	}
	for i, h := range append(hol.a, hol.v) {
		if g := hol.leaf1.Port(i).PG(3); g.XOffFrames == 0 || h.Pauses.Frames[3] == 0 {
			t.Errorf("leaf1 port %d: %d XOFF sent, host got %d", i, g.XOffFrames, h.Pauses.Frames[3])
		}
	}
	for i, h := range hol.b {
		if h.Pauses.Frames[3] == 0 {
			t.Errorf("B%d never paused", i+1)
		}
	}

	t.Logf("victim rate: HOL %.1f Gb/s, control %.1f Gb/s; victim paused %v (HOL) vs %v (control)",
		hol.victimRate/1e9, ctl.victimRate/1e9, hol.v.Pauses.Ended[3], ctl.v.Pauses.Ended[4])
	if hol.victimRate > 0.5*float64(g100) {
		t.Errorf("victim got %.1f Gb/s despite head-of-line blocking, want < 50 Gb/s", hol.victimRate/1e9)
	}
	if ctl.victimRate < 0.97*float64(g100) {
		t.Errorf("control victim got %.1f Gb/s, want ≈ 100 Gb/s", ctl.victimRate/1e9)
	}
	if ctl.v.Pauses.Frames[4] != 0 || hol.v.Pauses.Frames[3] == 0 {
		t.Errorf("victim pause frames: HOL %d, control %d", hol.v.Pauses.Frames[3], ctl.v.Pauses.Frames[4])
	}
}
