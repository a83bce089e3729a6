package switchmodel_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/wire"
)

// incast builds one switch with n+1 ports at 100G: hosts 0..n−1 each send
// count frames of 1000 B with the given DSCP to host n.
func incast(t *testing.T, e *sim.Engine, cfg switchmodel.Config, n int, dscp uint8, count int64,
	onPFC func(sw **switchmodel.Switch) func(int, int, bool)) (*switchmodel.Switch, []*testbench.Host) {
	var sw *switchmodel.Switch
	var hook func(int, int, bool)
	if onPFC != nil {
		hook = onPFC(&sw)
	}
	sw = newSwitch(t, e, "leaf", cfg, rates(n+1, g100), hook)
	hosts := make([]*testbench.Host, n+1)
	for i := range hosts {
		hosts[i] = attachHost(t, e, sw, i, i)
	}
	prio := int(cfg.DSCPToTC[dscp])
	for i := range n {
		hosts[i].AddFlow(flow(roce(i, n, dscp, uint16(1000+i)), prio, count))
	}
	return sw, hosts
}

// TestPFCIncastLossless: 8:1 incast on priority 3 at 100G, 1 µs cables.
//
// On paper, for 9 ports:
//
//	reserve   = 9 ports × 8 PGs × 4096 B            =    294 912 B
//	headroom  = 3 × 100 Gb/s × 1 µs / 8 + 2 × 9216  =     55 932 B per lossless PG
//	          × 9 ports                             =    503 388 B
//	shared S  = 33 554 432 − 294 912 − 503 388      = 32 756 132 B
//
// The eight ingress PGs fill in lockstep (one frame each per 81.92 ns, the
// egress drains one frame per 81.92 ns in FIFO order), so with α = 1/8 a
// PG is refused from the shared pool, goes into headroom and sends XOFF
// when x = α(S − 8x), i.e. x = S/16 = 2 047 258 B (± a frame per PG). XON
// comes once the PG's headroom is empty and x + 3072 ≤ α × free shared.
// Headroom in use never exceeds 55 932 B and nothing is lost.
func TestPFCIncastLossless(t *testing.T) {
	const n, count = 8, 4000
	const S = 33_554_432 - 294_912 - 503_388
	e := sim.New(1)
	var xoffs, xons int
	firstShared := int64(-1)
	sw, hosts := incast(t, e, switchmodel.DefaultConfig(), n, 26, count, func(swp **switchmodel.Switch) func(int, int, bool) {
		return func(port, prio int, xoff bool) {
			sw := *swp
			g := sw.Port(port).PG(prio)
			if prio != 3 || port >= n {
				t.Errorf("PFC from port %d prio %d", port, prio)
			}
			if xoff {
				xoffs++
				if firstShared < 0 {
					firstShared = g.Shared
				}
				return
			}
			xons++
			if g.Headroom != 0 || g.Shared > 0 && g.Shared+3072 > sw.Threshold() {
				t.Errorf("XON at %v with headroom %d, shared %d, threshold %d: before the hysteresis",
					e.Now(), g.Headroom, g.Shared, sw.Threshold())
			}
		}
	})
	if got := sw.SharedPool(); got != S {
		t.Fatalf("shared pool = %d, want %d", got, S)
	}
	if got := switchmodel.HeadroomFor(g100, hop, 9216); got != 55_932 {
		t.Fatalf("HeadroomFor = %d, want 55932", got)
	}
	e.Run()

	if got, want := hosts[n].Packets, int64(n*count); got != want {
		t.Errorf("receiver got %d packets, want %d", got, want)
	}
	if d := allDrops(sw); d != 0 {
		t.Errorf("%d drops on a lossless priority", d)
	}
	if u := sw.BufferUsed(); u != 0 {
		t.Errorf("buffer holds %d B after the run", u)
	}
	if want := int64(S / 16); firstShared < want-2*pktLen || firstShared > want+2*pktLen {
		t.Errorf("first XOFF at PG shared use %d, want S/16 = %d ± 2000", firstShared, want)
	}
	if xoffs < n || xons < n {
		t.Errorf("%d XOFF and %d XON decisions, want at least %d of each", xoffs, xons, n)
	}
	for i := range n {
		g := sw.Port(i).PG(3)
		if g.PeakHeadroom == 0 || g.PeakHeadroom > g.HeadroomSize {
			t.Errorf("port %d: peak headroom %d, want in (0, %d]", i, g.PeakHeadroom, g.HeadroomSize)
		}
		if g.XOffFrames == 0 || hosts[i].Pauses.Frames[3] == 0 {
			t.Errorf("port %d: %d XOFF frames sent, host got %d", i, g.XOffFrames, hosts[i].Pauses.Frames[3])
		}
		if g.XOff || g.Used != 0 {
			t.Errorf("port %d: still paused (%v) or holding %d B after the run", i, g.XOff, g.Used)
		}
	}
	t.Logf("XOFF decisions %d, XON %d; first XOFF at shared %d (S/16 = %d); peak headroom %d",
		xoffs, xons, firstShared, S/16, sw.Port(0).PG(3).PeakHeadroom)
}

// TestIncastLossyDrops: the same 8:1 incast on TC0 (lossy, DSCP 0) drops,
// and the drop counters account for every packet lost.
func TestIncastLossyDrops(t *testing.T) {
	const n, count = 8, 4000
	e := sim.New(1)
	sw, hosts := incast(t, e, switchmodel.DefaultConfig(), n, 0, count, nil)
	e.Run()
	var sent int64
	for i := range n {
		sent += hosts[i].Sent
		if hosts[i].Pauses.Frames != [8]int64{} {
			t.Errorf("host %d paused on a lossy priority: %v", i, hosts[i].Pauses.Frames)
		}
	}
	lost := sent - hosts[n].Packets
	if lost == 0 {
		t.Fatal("no loss in an 8:1 lossy incast")
	}
	if d := sw.Drops("ingress_admission"); d != lost {
		t.Errorf("ingress_admission drops = %d, lost = %d", d, lost)
	}
	if d := allDrops(sw); d != lost {
		t.Errorf("all drops = %d, lost = %d", d, lost)
	}
	if u := sw.BufferUsed(); u != 0 {
		t.Errorf("buffer holds %d B after the run", u)
	}
	t.Logf("sent %d, received %d, dropped %d", sent, hosts[n].Packets, lost)
}

// TestPauseExact: a paused priority sends nothing for exactly its pause
// time. Host 0 streams on priority 3 to host 1; at t0 a PFC frame with
// quanta Q reaches the switch port toward host 1. The frame on the wire
// finishes; the next starts at t0 + Q × 512 bit / 100 Gb/s and reaches the
// host 81.92 ns (serialization) + 1 µs (cable) later.
//
//	Q = 1000:  1000 × 512 / 100e9 = 5.12 µs
//	Q = 100:   100 × 512 / 100e9 = 512 ns
//	Q = 65535: 65535 × 512 / 100e9 = 335.5392 µs, cut short by XON at t0 + 2 µs
func TestPauseExact(t *testing.T) {
	ser := g100.Serialize(wireLen) // 81.92 ns
	tests := []struct {
		name   string
		quanta uint16
		xonAt  clock.Duration // 0: no XON
		paused clock.Duration
	}{
		{"quanta 1000", 1000, 0, 5120 * clock.Nanosecond},
		{"quanta 100", 100, 0, 512 * clock.Nanosecond},
		{"xon after 2us", 0xFFFF, 2 * clock.Microsecond, 2 * clock.Microsecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sim.New(1)
			sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rates(2, g100), nil)
			h0 := attachHost(t, e, sw, 0, 0)
			h1 := attachHost(t, e, sw, 1, 1)
			t0 := clock.Time(20*clock.Microsecond + 12345) // mid-frame
			var after clock.Time = -1
			h1.OnReceive = func(*wire.Packet) {
				if now := e.Now(); now > t0.Add(ser+hop) && after < 0 {
					after = now
				}
			}
			h0.AddFlow(flow(roce(0, 1, 26, 1), 3, 2000))
			e.At(t0, func() { sw.Port(1).Receive(pfc(3, tc.quanta)) })
			if tc.xonAt > 0 {
				e.At(t0.Add(tc.xonAt), func() { sw.Port(1).Receive(pfc(3, 0)) })
			}
			// Class reads what the snapshots read, mid-pause too.
			var mid [2]switchmodel.ClassState
			e.At(t0.Add(clock.Microsecond/2), func() {
				pt := sw.Port(1)
				mid[0], mid[1] = pt.Class(3), switchmodel.ClassState{DepthBytes: pt.Queue(3).DepthBytes, PausedTime: pt.Queue(3).PausedTime, XOffTime: pt.PG(3).XOffTime}
			})
			e.Run()
			if mid[0] != mid[1] || mid[0].PausedTime == 0 {
				t.Errorf("mid-pause: Class = %+v, snapshots %+v (want equal, paused)", mid[0], mid[1])
			}
			if want := t0.Add(tc.paused + ser + hop); after != want {
				t.Errorf("first frame after the pause arrived at %v, want %v (gap %v)", after, want, after.Sub(want))
			}
			q := sw.Port(1).Queue(3)
			if q.PausedTime != tc.paused {
				t.Errorf("paused time counter = %v, want %v", q.PausedTime, tc.paused)
			}
			if h1.Packets != 2000 {
				t.Errorf("received %d, want 2000", h1.Packets)
			}
		})
	}
}
