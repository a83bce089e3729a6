package pipe

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// hopNode forwards what it receives over one of its pipes: at once
// (Receive), after a serialization that may end after a later packet's
// (Launch), or after a local wait behind the pipe's last packet, and folds
// every arrival into its trace; packets die after a number of hops. Link delays
// are multiples of a quarter lookahead, so arrivals tie all the time and
// busy links queue packets behind each other.
type hopNode struct {
	e     *sim.Engine
	rnd   *rand.Rand
	out   []*Pipe
	busy  []clock.Time // per pipe: when its last packet was serialized
	state uint64
	trace []string
}

func (n *hopNode) Receive(p *wire.Packet) {
	n.state = n.state*1099511628211 + uint64(p.PSN) + uint64(n.e.Now())
	n.trace = append(n.trace, fmt.Sprintf("%v:%d:%x", n.e.Now(), p.PSN, n.state&0xfff))
	if p.TTL == 0 {
		return
	}
	p.TTL--
	i := n.rnd.IntN(len(n.out))
	switch n.rnd.IntN(3) {
	case 0:
		n.out[i].Receive(p)
	case 1:
		n.out[i].Launch(p, n.e.Now().Add(clock.Duration(n.rnd.IntN(4))*250))
	default:
		n.e.Schedule(n.e.Now().Add(clock.Duration(n.rnd.IntN(3))*250), (*forward)(n), &held{i, p})
	}
}

// launch sends p over pipe i when it has been serialized, no earlier than
// the end of the pipe's last packet, as a port does.
func (n *hopNode) launch(i int, p *wire.Packet, end clock.Time) {
	end = max(end, n.busy[i])
	n.busy[i] = end
	n.out[i].Launch(p, end)
}

type held struct {
	i int
	p *wire.Packet
}

type forward hopNode

func (f *forward) Handle(arg any) {
	n, h := (*hopNode)(f), arg.(*held)
	n.launch(h.i, h.p, n.e.Now())
}

// buildHops wires nodes over engines (node i on engines[i%len]) with three
// pipes out of each, across engines where the ends differ, and injects
// packets at 0 and 250 ps.
func buildHops(engines []*sim.Engine, nodes int, seed uint64) []*hopNode {
	const la = 1000
	rnd := rand.New(rand.NewPCG(seed, 7))
	ns := make([]*hopNode, nodes)
	for i := range ns {
		e := engines[i%len(engines)]
		ns[i] = &hopNode{e: e, rnd: e.NewRand(fmt.Sprint("hop", i))}
	}
	for _, n := range ns {
		for range 3 {
			to := ns[rnd.IntN(nodes)]
			d := clock.Duration(la * (4 + rnd.IntN(3)) / 4)
			if to.e == n.e {
				n.out = append(n.out, New(n.e, d, to))
			} else {
				n.out = append(n.out, NewAcross(n.e, to.e, d, to))
			}
		}
		n.busy = make([]clock.Time, len(n.out))
	}
	psn := uint32(0)
	for i, n := range ns {
		for k := range 6 {
			psn++
			p := &wire.Packet{PSN: psn, TTL: uint8(20 + (i+k)%30)}
			n.e.At(clock.Time(250*(k%2)), func() { n.launch(k%len(n.out), p, n.e.Now()) })
		}
	}
	return ns
}

func hopsDigest(ns []*hopNode) (string, int) {
	h := fnv.New64a()
	n := 0
	for _, x := range ns {
		for _, s := range x.trace {
			h.Write([]byte(s))
		}
		h.Write([]byte{';'})
		n += len(x.trace)
	}
	return fmt.Sprintf("%x", h.Sum64()), n
}

// TestAcrossMatchesOneEngine: packets hopping over a mesh of pipes, cut
// over 2 and 3 engines of a group, arrive everywhere exactly as on one
// engine, ties and queued links included.
func TestAcrossMatchesOneEngine(t *testing.T) {
	for seed := range uint64(24) {
		one := sim.New(seed)
		ref := buildHops([]*sim.Engine{one}, 9, seed)
		one.Run()
		want, events := hopsDigest(ref)
		if events < 500 {
			t.Fatalf("seed %d: only %d arrivals", seed, events)
		}
		for _, parts := range []int{2, 3} {
			g, err := sim.NewGroup(seed, parts, 2, 1000)
			if err != nil {
				t.Fatal(err)
			}
			engines := make([]*sim.Engine, parts)
			for i := range engines {
				engines[i] = g.Engine(i)
			}
			ns := buildHops(engines, 9, seed)
			g.Run()
			g.Close()
			if got, n := hopsDigest(ns); got != want || n != events {
				for i := range ns {
					a, b := ref[i].trace, ns[i].trace
					for j := range min(len(a), len(b)) {
						if a[j] != b[j] {
							t.Fatalf("seed %d, %d engines: node %d arrival %d is %s, one engine's %s", seed, parts, i, j, b[j], a[j])
						}
					}
				}
				t.Fatalf("seed %d, %d engines: digest %s over %d arrivals, want %s over %d", seed, parts, got, n, want, events)
			}
		}
	}
}
