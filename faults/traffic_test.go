package faults

import (
	"math"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

func runTraffic(t *testing.T, spec string, until clock.Duration, during func(e *sim.Engine, g *TrafficSource)) (*recorder, *TrafficSource) {
	t.Helper()
	e := sim.New(1)
	rec := &recorder{sched: e}
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.New(Env{Sched: e, Rate: 100 * clock.Gbps, SrcIP: netip.MustParseAddr("10.0.0.1"), Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	g := f.(*TrafficSource)
	ch := NewChain(rec)
	ch.Add(g)
	if during != nil {
		during(e, g)
	}
	e.RunUntil(clock.Time(until))
	return rec, g
}

// TestElephant: an elephant at 40G, on 100 µs off 100 µs, for 1 ms sends
// at 40G (in wire bytes) half the time: 5 windows × 100 µs × 40G. Frames
// carry valid bytes (ICRC checked).
func TestElephant(t *testing.T) {
	rec, g := runTraffic(t, "elephant dst 10.0.0.2 rate 40G on 100us off 100us for 1ms size 1024", 2*clock.Millisecond, nil)
	wireBits := float64(len(rec.got) * wire.OnWireBytes(rec.pkts[0].Len) * 8)
	want := 40e9 * 500e-6
	if math.Abs(wireBits-want)/want > 0.01 {
		t.Errorf("sent %.0f wire bits, want %.0f ± 1%%", wireBits, want)
	}
	for _, a := range rec.got {
		period := a.at.Sub(0) % (200 * clock.Microsecond)
		if period >= 100*clock.Microsecond {
			t.Fatalf("frame sent at %s, in an off window", a.at)
		}
	}
	if err := wire.VerifyICRC(rec.pkts[0].Raw); err != nil || rec.pkts[0].Len != len(rec.pkts[0].Raw) {
		t.Errorf("frame bytes: %v (len %d vs %d)", err, rec.pkts[0].Len, len(rec.pkts[0].Raw))
	}
	if g.c.Generated != int64(len(rec.got)) {
		t.Errorf("generated %d", g.c.Generated)
	}
	t.Logf("elephant: %d frames, %.2f Gb/s while on", len(rec.got), wireBits/500e-6/1e9)
}

// TestIncast: bursts of 64 KB every 100 µs: 10 bursts in 1 ms, each
// ⌈64000/1024⌉ = 63 frames sent back to back at the link rate.
func TestIncast(t *testing.T) {
	rec, _ := runTraffic(t, "incast dst 10.0.0.2 burst 64KB period 100us size 1024 for 1ms", 2*clock.Millisecond, nil)
	if len(rec.got) != 630 {
		t.Errorf("%d frames, want 630", len(rec.got))
	}
	// With bytes, Len is 1022: the payload is cut to the 4-byte alignment.
	gap := (100 * clock.Gbps).Serialize(wire.OnWireBytes(rec.pkts[0].Len))
	if rec.got[1].at.Sub(rec.got[0].at) != gap || rec.got[63].at != clock.Time(100*clock.Microsecond) {
		t.Errorf("gap %s (want %s), burst 2 at %s", rec.got[1].at.Sub(rec.got[0].at), gap, rec.got[63].at)
	}
}

// TestTrafficObeysPFC: an XOFF of 65535 quanta at 10 µs stops the source
// for 65535 × 512 bit times at 100G (335.5 µs); an XON at 100 µs resumes
// it.
func TestTrafficObeysPFC(t *testing.T) {
	pause := func(q uint16) *wire.Packet {
		p := &wire.Packet{Kind: wire.KindPFC, ClassEnable: 1 << 3}
		p.Quanta[3] = q
		return p
	}
	for _, xon := range []bool{false, true} {
		rec, g := runTraffic(t, "elephant dst 10.0.0.2", 500*clock.Microsecond, func(e *sim.Engine, g *TrafficSource) {
			e.At(clock.Time(10*clock.Microsecond), func() { g.Receive(pause(0xFFFF)) })
			if xon {
				e.At(clock.Time(100*clock.Microsecond), func() { g.Receive(pause(0)) })
			}
		})
		resume := clock.Time(10*clock.Microsecond) + clock.Time(wire.PauseTime(100*clock.Gbps, 0xFFFF))
		if xon {
			resume = clock.Time(100 * clock.Microsecond)
		}
		var gapStart, gapEnd clock.Time
		for i := 1; i < len(rec.got); i++ {
			if d := rec.got[i].at.Sub(rec.got[i-1].at); d > clock.Microsecond {
				gapStart, gapEnd = rec.got[i-1].at, rec.got[i].at
			}
		}
		if gapStart > clock.Time(10*clock.Microsecond) || gapEnd != resume || g.PauseFrames != 1+btoi(xon) {
			t.Errorf("xon %v: silent from %s to %s, want ≤10µs to %s", xon, gapStart, gapEnd, resume)
		}
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
