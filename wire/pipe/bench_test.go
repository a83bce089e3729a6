package pipe

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// BenchmarkPipeChain sends b.N packets, one every 20 ns, through a chain of
// 8 pipes of 1 µs each (50 packets in flight per pipe); events/s counts one
// event per packet per hop.
func BenchmarkPipeChain(b *testing.B) {
	const hops = 8
	e := sim.New(1)
	sink := &counter{}
	var first *Pipe
	var next wire.Sink = sink
	for range hops {
		first = New(e, clock.Microsecond, next)
		next = first
	}
	pkts := make([]wire.Packet, 1024)
	src := &sender{e: e, to: first, pkts: pkts, gap: 20 * clock.Nanosecond}
	b.ReportAllocs()
	b.ResetTimer()
	src.left = b.N
	e.Schedule(0, src, nil)
	e.Run()
	if sink.n != b.N {
		b.Fatalf("delivered %d of %d", sink.n, b.N)
	}
	b.ReportMetric(float64(b.N*hops)/b.Elapsed().Seconds(), "pkt-hops/s")
	b.ReportMetric(float64(e.Executed())/b.Elapsed().Seconds(), "events/s")
}

// sender injects packets at a fixed gap using the allocation-free path.
type sender struct {
	e    *sim.Engine
	to   wire.Sink
	pkts []wire.Packet
	gap  clock.Duration
	left int
	i    int
}

func (s *sender) Handle(any) {
	s.to.Receive(&s.pkts[s.i%len(s.pkts)])
	s.i++
	if s.left--; s.left > 0 {
		s.e.ScheduleAfter(s.gap, s, nil)
	}
}
