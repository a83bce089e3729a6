package pipe

import (
	"fmt"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// prefetchSink logs the packets (by PSN) a link asks it to prefetch and
// those it delivers, in order.
type prefetchSink struct{ log []string }

func (s *prefetchSink) PrefetchReceive(p *wire.Packet) {
	s.log = append(s.log, fmt.Sprint("ask ", p.PSN))
}

func (s *prefetchSink) Receive(p *wire.Packet) { s.log = append(s.log, fmt.Sprint("got ", p.PSN)) }

// TestLinkPrefetchesHead: the engine asks the link at the head of its
// queue for its head packet's memory one event ahead (sim.Prefetcher),
// and the link passes the packet it will deliver to a sink that can
// prefetch (wire.ReceivePrefetcher). A link arms the event for its next
// packet when it delivers one, so what is asked for ahead of a delivery
// is another link's packet, or the first of a train.
func TestLinkPrefetchesHead(t *testing.T) {
	type send struct {
		at   clock.Time
		link int
	}
	tests := []struct {
		name  string
		sends []send // PSN 1, 2, …
		want  []string
	}{
		{"one packet: nothing runs before it", []send{{0, 0}}, []string{"got 1"}},
		{"a train on one link: its first, by the send before it", []send{{0, 0}, {10, 0}, {20, 0}},
			[]string{"ask 1", "got 1", "got 2", "got 3"}},
		{"two links taking turns: each delivery asks for the next", []send{{0, 0}, {5, 1}, {10, 0}, {15, 1}},
			[]string{"ask 1", "ask 2", "got 1", "ask 3", "got 2", "ask 4", "got 3", "got 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sim.New(1)
			s := &prefetchSink{}
			links := []*Pipe{New(e, 100, s), New(e, 100, s)}
			for i, sd := range tt.sends {
				p := &wire.Packet{PSN: uint32(i + 1)}
				e.At(sd.at, func() { links[sd.link].Receive(p) })
			}
			e.Run()
			if d := gocmp.Diff(tt.want, s.log); d != "" {
				t.Errorf("prefetch before each delivery (-want +got):\n%s", d)
			}
		})
	}
}
