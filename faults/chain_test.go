package faults

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pipe"
)

// trace runs 2000 raw frames, 50 ns apart, through a 1 µs link into a
// recorder, with wrap (if set) in front of the link and act (if set) run
// at 0; it returns the arrivals and the engine's event count.
func trace(t *testing.T, wrap func(e *sim.Engine, s wire.Sink) wire.Sink, act func(e *sim.Engine)) ([]arrival, uint64) {
	e := sim.New(42)
	rec := &recorder{sched: e}
	var in wire.Sink = pipe.New(e, clock.Microsecond, rec)
	if wrap != nil {
		in = wrap(e, in)
	}
	if act != nil {
		act(e)
	}
	sendEvery(e, 0, 50*clock.Nanosecond, 2000, in, func(i int) *wire.Packet { return rawRoCE(t, uint32(i), i%2 == 1, 64) })
	e.Run()
	return rec.got, e.Executed()
}

// TestChainPassThrough: an empty chain gives the same arrivals (time,
// order, bytes) and the same number of engine events as no chain; so does
// a chain whose faults were added and cleared, for every packet sent after
// the clear.
func TestChainPassThrough(t *testing.T) {
	want, wantEvents := trace(t, nil, nil)
	got, events := trace(t, func(_ *sim.Engine, s wire.Sink) wire.Sink { return NewChain(s) }, nil)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(arrival{})); diff != "" || events != wantEvents {
		t.Errorf("empty chain differs (events %d vs %d): %s", events, wantEvents, diff)
	}

	var ch *Chain
	clearAt := clock.Time(40 * clock.Microsecond)
	got, _ = trace(t, func(_ *sim.Engine, s wire.Sink) wire.Sink { ch = NewChain(s); return ch }, func(e *sim.Engine) {
		for _, spec := range []string{"loss 30%", "delay 3us jitter 1us dist normal reorder 10%", "duplicate 20%", "rate 10G", "corrupt 10%", "dscp-map 26:0"} {
			s, err := ParseSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.New(Env{Sched: e, Rand: e.Rand(spec)})
			if err != nil {
				t.Fatal(err)
			}
			ch.Add(f)
		}
		e.At(clearAt, func() {
			if n := ch.Clear(); n != 6 {
				t.Errorf("cleared %d", n)
			}
		})
	})
	// Packets sent from the clear on (index 800 on, at 40 µs; sent after
	// the clear event, which was scheduled first) must arrive exactly as
	// without faults.
	tail := func(a []arrival) []arrival {
		var out []arrival
		for _, x := range a {
			if x.psn >= 800 {
				out = append(out, x)
			}
		}
		return out
	}
	if diff := cmp.Diff(tail(want), tail(got), cmp.AllowUnexported(arrival{})); diff != "" {
		t.Errorf("after clear: %s", diff)
	}
	if len(tail(want)) != 1200 {
		t.Errorf("tail has %d packets", len(tail(want)))
	}
}

// TestChainOrderAndRemove: stages apply in the order added; removing the
// middle one relinks; removing an unknown ID reports false.
func TestChainOrderAndRemove(t *testing.T) {
	var rec recorder
	ch := NewChain(&rec)
	a := NewDSCPRewrite(NewDSCPMap([2]uint8{26, 10}))
	b := NewDSCPRewrite(NewDSCPMap([2]uint8{10, 20}))
	ida, _ := ch.Add(a)
	idb, _ := ch.Add(b)
	ch.Receive(roce(1))
	if rec.pkts[0].DSCP != 20 {
		t.Errorf("DSCP %d, want 26→10→20", rec.pkts[0].DSCP)
	}
	ch.Remove(ida)
	ch.Receive(roce(2))
	if rec.pkts[1].DSCP != 26 || ch.Remove(ida) || !ch.Remove(idb) {
		t.Errorf("after remove: DSCP %d", rec.pkts[1].DSCP)
	}
	if len(ch.Faults()) != 0 {
		t.Error("faults left")
	}
}

// TestDelayCloseReleases: removing a delay stage releases what it holds
// at once and in order.
func TestDelayCloseReleases(t *testing.T) {
	e := sim.New(1)
	rec := &recorder{sched: e}
	ch, _ := chained(t, e, "delay 100us jitter 10us reorder 20%", rec)
	sendEvery(e, 0, clock.Microsecond, 50, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
	e.At(clock.Time(60*clock.Microsecond), func() { ch.Clear() })
	e.Run()
	if len(rec.got) != 50 {
		t.Fatalf("got %d", len(rec.got))
	}
	for _, a := range rec.got {
		if a.at != clock.Time(60*clock.Microsecond) {
			t.Fatalf("packet %d released at %s", a.psn, a.at)
		}
	}
}
