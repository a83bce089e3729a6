package pipe

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// arrival is what a sink saw: which packet (by PSN) and when.
type arrival struct {
	PSN uint32
	At  clock.Time
}

type sinkRec struct {
	e   *sim.Engine
	got []arrival
}

func (s *sinkRec) Receive(p *wire.Packet) { s.got = append(s.got, arrival{p.PSN, s.e.Now()}) }

func TestPipe(t *testing.T) {
	tests := []struct {
		name  string
		delay clock.Duration
		sends []clock.Time // send time of packet i (PSN i)
		want  []arrival
	}{
		{"one packet", 100, []clock.Time{5}, []arrival{{0, 105}}},
		{"many in flight", 1000, []clock.Time{0, 10, 20, 30, 900},
			[]arrival{{0, 1000}, {1, 1010}, {2, 1020}, {3, 1030}, {4, 1900}}},
		{"same send time keeps order", 50, []clock.Time{7, 7, 7},
			[]arrival{{0, 57}, {1, 57}, {2, 57}}},
		{"zero delay", 0, []clock.Time{3, 4}, []arrival{{0, 3}, {1, 4}}},
		{"link drains then refills", 10, []clock.Time{0, 100, 101},
			[]arrival{{0, 10}, {1, 110}, {2, 111}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sim.New(1)
			s := &sinkRec{e: e}
			l := New(e, tc.delay, nil)
			l.SetTo(s)
			for i, at := range tc.sends {
				p := &wire.Packet{PSN: uint32(i)}
				e.At(at, func() { l.Receive(p) })
			}
			e.Run()
			if d := gocmp.Diff(tc.want, s.got); d != "" {
				t.Errorf("arrivals (-want +got):\n%s", d)
			}
			if l.InFlight() != 0 {
				t.Errorf("InFlight=%d", l.InFlight())
			}
		})
	}
}

// TestPipeRingGrowth sends more packets than the initial ring holds while
// the head is mid-ring, and checks order and times.
func TestPipeRingGrowth(t *testing.T) {
	e := sim.New(1)
	s := &sinkRec{e: e}
	l := New(e, 1000, s)
	var want []arrival
	for i := range 100 {
		at := clock.Time(i * 30)
		p := &wire.Packet{PSN: uint32(i)}
		e.At(at, func() { l.Receive(p) })
		want = append(want, arrival{uint32(i), at + 1000})
	}
	e.Run()
	if d := gocmp.Diff(want, s.got); d != "" {
		t.Errorf("arrivals (-want +got):\n%s", d)
	}
	if e.Pending() != 0 {
		t.Errorf("Pending=%d", e.Pending())
	}
}

// echo sends every packet it receives back into a link, up to a hop limit.
type echo struct {
	back *Pipe
	max  uint32
}

func (x *echo) Receive(p *wire.Packet) {
	if p.TTL < uint8(x.max) {
		p.TTL++
		x.back.Receive(p)
	}
}

// TestPipeCycle wires two links into a loop with SetTo and checks a packet
// bounces with the sum of the delays per round trip.
func TestPipeCycle(t *testing.T) {
	e := sim.New(1)
	ab := New(e, 7, nil)
	ba := New(e, 3, nil)
	ab.SetTo(&echo{back: ba, max: 10})
	ba.SetTo(&echo{back: ab, max: 10})
	ab.Receive(&wire.Packet{})
	e.Run()
	// 11 traversals: the first send plus 10 echoes, alternating ab, ba, …:
	// 6 × 7 + 5 × 3 = 57.
	if e.Now() != 57 {
		t.Errorf("Now=%v, want 57ps", e.Now())
	}
}

// counter is a sink that counts packets.
type counter struct{ n int }

func (c *counter) Receive(*wire.Packet) { c.n++ }

// TestHopAllocs checks that a hop through a pipe allocates nothing once its
// ring and the engine's tables have grown.
func TestHopAllocs(t *testing.T) {
	e := sim.New(1)
	sink := &counter{}
	l := New(e, clock.Microsecond, sink)
	p := &wire.Packet{}
	if a := testing.AllocsPerRun(100, func() {
		l.Receive(p)
		l.Receive(p)
		e.Run()
	}); a != 0 {
		t.Errorf("pipe hop: %v allocs, want 0", a)
	}
	if sink.n != 202 {
		t.Errorf("delivered %d, want 202", sink.n)
	}
}
