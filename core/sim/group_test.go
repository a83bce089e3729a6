package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// mesh is a model for the group tests: nodes that, on each message, fold
// (time, message, node state) into a trace and send on one or two
// messages, to themselves or to other nodes, at delays that are multiples
// of a quarter lookahead so that ties at one picosecond are everywhere.
// Some messages arm a timer and some cancel it. Each node draws from its
// own random stream, so it behaves the same whichever engine holds it.
type mesh struct {
	la      clock.Duration
	nodes   []*meshNode
	samples []string
	// coord, if set, runs f now with every node still (one engine's
	// AfterFunc(0), a group's At(Now)); nodes call it every coordEvery
	// events of their budget.
	coord      func(f func())
	coordEvery int
}

type meshNode struct {
	m      *mesh
	stopAt clock.Time // the node calls Stop on its engine at its first event at or after this (0: never)
	id     int
	e      *Engine
	budget int
	state  uint64
	trace  []string
	timer  clock.Timer
	rnd    interface{ IntN(int) int }
	sendOn func(dst *meshNode, t clock.Time, h Handler, arg any)
}

type msg struct {
	to  *meshNode
	tag int
}

func (n *meshNode) Handle(arg any) {
	m := arg.(*msg)
	n.state = n.state*1099511628211 + uint64(m.tag) + uint64(n.e.Now())
	n.trace = append(n.trace, fmt.Sprintf("%v:%d:%x", n.e.Now(), m.tag, n.state&0xffff))
	if n.stopAt > 0 && n.e.Now() >= n.stopAt {
		n.stopAt = 0
		n.e.Stop()
	}
	if n.budget == 0 {
		return
	}
	n.budget--
	if n.m.coord != nil && n.budget%n.m.coordEvery == 0 {
		n.m.coord(n.m.broadcast)
	}
	sends := 1
	switch n.rnd.IntN(10) {
	case 0:
		sends = 0
	case 1, 2:
		sends = 2
	}
	for range sends {
		tag := n.rnd.IntN(1 << 20)
		if n.rnd.IntN(3) == 0 { // to itself, at a delay the lookahead does not bound
			n.sendOn(n, n.e.Now().Add(clock.Duration(n.rnd.IntN(3))*n.m.la/4), n, &msg{to: n, tag: tag})
			continue
		}
		dst := n.m.nodes[n.rnd.IntN(len(n.m.nodes))]
		d := n.m.la * clock.Duration(4+n.rnd.IntN(5)) / 4
		n.sendOn(dst, n.e.Now().Add(d), dst, &msg{to: dst, tag: tag})
	}
	switch n.rnd.IntN(8) {
	case 0:
		if n.timer == nil || !n.timer.Stop() {
			id := n.state & 0xff
			n.timer = n.e.AfterFunc(n.m.la/2, func() { n.trace = append(n.trace, fmt.Sprintf("%v:timer:%x", n.e.Now(), id)) })
		}
	case 1:
		if n.timer != nil {
			n.timer.Stop()
		}
	}
}

// newMesh places nodes on engines[i%len(engines)] and seeds each with two
// messages at time 0 and one at a quarter lookahead.
func newMesh(engines []*Engine, nodes, budget int, la clock.Duration) *mesh {
	return buildMesh(engines, nodes, budget, la, false)
}

// buildMesh is newMesh, seeding the nodes in the reverse order if reverse.
func buildMesh(engines []*Engine, nodes, budget int, la clock.Duration, reverse bool) *mesh {
	m := &mesh{la: la}
	for i := range nodes {
		e := engines[i%len(engines)]
		n := &meshNode{m: m, id: i, e: e, budget: budget, rnd: e.NewRand(fmt.Sprint("node", i))}
		n.sendOn = func(dst *meshNode, t clock.Time, h Handler, arg any) {
			if dst.e == n.e {
				n.e.Schedule(t, h, arg)
				return
			}
			n.e.Send(inbox{dst.e, h}, t, arg)
		}
		if len(engines) == 1 {
			n.sendOn = func(_ *meshNode, t clock.Time, h Handler, arg any) { n.e.Schedule(t, h, arg) }
		}
		m.nodes = append(m.nodes, n)
	}
	seeded := slices.Clone(m.nodes)
	if reverse {
		slices.Reverse(seeded)
	}
	for _, n := range seeded {
		n.e.Schedule(0, n, &msg{to: n, tag: n.id})
		n.e.Schedule(0, n, &msg{to: n, tag: 1000 + n.id})
		n.e.Schedule(clock.Time(la/4), n, &msg{to: n, tag: 2000 + n.id})
	}
	return m
}

// broadcast samples every node and sends each a message now, on its own
// engine: what a coordinator of several partitions does.
func (m *mesh) broadcast() {
	m.sample(m.nodes[0].e.Now())
	for _, n := range m.nodes {
		n.e.Schedule(n.e.Now(), n, &msg{to: n, tag: 3000 + n.id})
	}
}

func (m *mesh) digest() (string, int) {
	h := fnv.New64a()
	events := 0
	for _, n := range m.nodes {
		h.Write([]byte(strings.Join(n.trace, ",")))
		h.Write([]byte{';'})
		events += len(n.trace)
	}
	return fmt.Sprintf("%x", h.Sum64()), events
}

// TestGroupMatchesOneEngine: a mesh of nodes over 2, 3 and 5 engines runs
// exactly as it does on one engine, every node's trace equal event for
// event, ties included, whether run to the end at once or in slices.
func TestGroupMatchesOneEngine(t *testing.T) {
	const la = 1000 * clock.Picosecond
	for _, tc := range []struct {
		nodes, budget int
		seed          uint64
	}{{8, 400, 1}, {16, 300, 2}, {5, 1000, 3}} {
		one := New(tc.seed)
		ref := newMesh([]*Engine{one}, tc.nodes, tc.budget, la)
		one.Run()
		want, events := ref.digest()
		if events < tc.nodes*tc.budget/2 {
			t.Fatalf("the reference ran %d events, too few to test", events)
		}
		for _, parts := range []int{1, 2, 3, 5} {
			for i, slice := range []clock.Duration{0, 7*la + 3} {
				workers := 1 + i*(parts-1) // all on the caller's goroutine, then one each
				if parts == 5 && i == 1 {
					workers = 2 // five engines handed out to two
				}
				t.Run(fmt.Sprintf("nodes=%d/parts=%d/workers=%d/slice=%v", tc.nodes, parts, workers, slice), func(t *testing.T) {
					g, err := NewGroup(tc.seed, parts, workers, la)
					if err != nil {
						t.Fatal(err)
					}
					defer g.Close()
					m := newMesh(g.engines, tc.nodes, tc.budget, la)
					if slice == 0 {
						g.Run()
					} else {
						for g.Pending() > 0 {
							g.RunUntil(g.Now().Add(slice))
						}
					}
					if got, n := m.digest(); got != want || n != events {
						for i := range m.nodes {
							a, b := ref.nodes[i].trace, m.nodes[i].trace
							for j := range min(len(a), len(b)) {
								if a[j] != b[j] {
									t.Fatalf("node %d, event %d: got %s, one engine ran %s", i, j, b[j], a[j])
								}
							}
						}
						t.Fatalf("digest %s over %d events, want %s over %d", got, n, want, events)
					}
					if g.Executed() != one.Executed() {
						t.Errorf("executed %d, one engine %d", g.Executed(), one.Executed())
					}
				})
			}
		}
	}
}

// TestGroupOrderMatters checks that the mesh test can fail: on one engine,
// the same mesh with its first messages queued in the reverse order (same
// times, so only ties change) ends with another digest.
func TestGroupOrderMatters(t *testing.T) {
	const la = 1000 * clock.Picosecond
	a := New(1)
	ma := newMesh([]*Engine{a}, 8, 400, la)
	a.Run()
	b := New(1)
	mb := buildMesh([]*Engine{b}, 8, 400, la, true)
	b.Run()
	da, _ := ma.digest()
	if db, _ := mb.digest(); da == db {
		t.Error("reordering ties did not change the digest: the group test cannot tell orders apart")
	}
}

func TestGroupRefusesEventsInsideTheLookahead(t *testing.T) {
	g, err := NewGroup(1, 2, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a, b := g.Engine(0), g.Engine(1)
	var got any
	h := handlerFunc(func(any) {
		defer func() { got = recover() }()
		a.Send(inbox{b, handlerFunc(func(any) {})}, a.Now().Add(999), nil)
	})
	a.Schedule(10, h, nil)
	g.Run()
	if s, _ := got.(string); !strings.Contains(s, "inside the lookahead") {
		t.Errorf("recovered %v, want a panic naming the lookahead", got)
	}
	for _, bad := range []struct {
		n  int
		la clock.Duration
	}{{0, 1000}, {2, 0}} {
		if _, err := NewGroup(1, bad.n, 1, bad.la); err == nil {
			t.Errorf("NewGroup(%d, %v) took it", bad.n, bad.la)
		}
	}
}

// inbox is a letter's receiving side that schedules h on e where the
// sender's insertion stood: what one engine would have run.
type inbox struct {
	e *Engine
	h Handler
}

func (ib inbox) Arrive(at clock.Time, arg any, sent Ticket) {
	ib.e.ScheduleSeq(at, ib.e.Seq(sent), ib.h, arg)
}

type handlerFunc func(any)

func (f handlerFunc) Handle(arg any) { f(arg) }

// sample folds every node's state into the mesh's own trace: what a global
// event reads.
func (m *mesh) sample(now clock.Time) {
	var x uint64
	for _, n := range m.nodes {
		x = x*31 + n.state
	}
	m.samples = append(m.samples, fmt.Sprintf("%v:%x", now, x&0xffffff))
}

// TestGroupGlobalsSerialAndStop: global events (Group.At against one
// engine's At, some tied with node events), windows run serially on and
// off, and a Stop called by a node in a serial window, all give one
// engine's run: the same traces, samples, stopping point and event count.
func TestGroupGlobalsSerialAndStop(t *testing.T) {
	const la = 1000 * clock.Picosecond
	sampleAt := []clock.Time{0, 250, 3000, 3000, 7750, 20000}
	const stopAt = 15000
	one := New(4)
	ref := newMesh([]*Engine{one}, 12, 300, la)
	ref.nodes[5].stopAt = stopAt
	for _, at := range sampleAt {
		one.At(at, func() { ref.sample(one.Now()) })
	}
	one.RunUntil(clock.Never)
	if one.Pending() == 0 || one.Now() < stopAt {
		t.Fatalf("the reference did not stop early: at %v with %d pending", one.Now(), one.Pending())
	}
	want, events := ref.digest()
	for _, serial := range []struct {
		name string
		f    func(start clock.Time) bool
	}{
		{"always", func(clock.Time) bool { return true }},
		{"near the stop", func(start clock.Time) bool { return start.Add(2*la) > stopAt }},
		{"every third window and near the stop", nil},
		{"never", func(clock.Time) bool { return false }},
	} {
		t.Run(serial.name, func(t *testing.T) {
			g, err := NewGroup(4, 3, 2, la)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			m := newMesh(g.engines, 12, 300, la)
			m.nodes[5].stopAt = stopAt
			for _, at := range sampleAt {
				g.At(at, func() { m.sample(g.Now()) })
			}
			g.Serial = serial.f
			if g.Serial == nil {
				k := 0
				g.Serial = func(start clock.Time) bool { k++; return k%3 == 0 || start.Add(2*la) > stopAt }
			}
			g.RunUntil(clock.Never)
			if serial.name == "never" {
				// A Stop in a parallel window takes effect at its end: the
				// other engines ran on, which is why Serial exists.
				if g.Executed() <= one.Executed() || g.Now() <= one.Now() {
					t.Errorf("a parallel window stopped at %v after %d events, one engine at %v after %d: it should run on",
						g.Now(), g.Executed(), one.Now(), one.Executed())
				}
				return
			}
			if got, n := m.digest(); got != want || n != events {
				t.Errorf("digest %s over %d events, want %s over %d", got, n, want, events)
			}
			if d := strings.Join(m.samples, " "); d != strings.Join(ref.samples, " ") {
				t.Errorf("samples %s, want %s", d, strings.Join(ref.samples, " "))
			}
			if g.Now() != one.Now() || g.Executed() != one.Executed() || g.Pending() != one.Pending() {
				t.Errorf("stopped at %v after %d events with %d pending; one engine at %v after %d with %d",
					g.Now(), g.Executed(), g.Pending(), one.Now(), one.Executed(), one.Pending())
			}
		})
	}
}

// TestGroupAtFromSerialWindow: an event of a serial window that calls At
// for now (a coordinator that reads every partition and then acts on each,
// as a collective's iteration end starts the next one) runs it in the
// place one engine's AfterFunc(0) takes: after what was due before, before
// what the same event scheduled after it. Traces, samples and event counts
// match one engine's.
func TestGroupAtFromSerialWindow(t *testing.T) {
	const la = 1000 * clock.Picosecond
	one := New(6)
	ref := newMesh([]*Engine{one}, 10, 200, la)
	ref.coordEvery = 37
	ref.coord = func(f func()) { one.AfterFunc(0, f) }
	one.RunUntil(clock.Never)
	want, events := ref.digest()
	if len(ref.samples) < 10 {
		t.Fatalf("only %d coordinations in the reference", len(ref.samples))
	}
	g, err := NewGroup(6, 3, 2, la)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	m := newMesh(g.engines, 10, 200, la)
	m.coordEvery = 37
	m.coord = func(f func()) { g.At(g.Now(), f) }
	g.Serial = func(clock.Time) bool { return true }
	g.RunUntil(clock.Never)
	if got, n := m.digest(); got != want || n != events {
		t.Errorf("digest %s over %d events, want %s over %d", got, n, want, events)
	}
	if d, w := strings.Join(m.samples, " "), strings.Join(ref.samples, " "); d != w {
		t.Errorf("samples differ:\n got %.200s\nwant %.200s", d, w)
	}
	if g.Executed() != one.Executed() {
		t.Errorf("%d events, one engine %d", g.Executed(), one.Executed())
	}
}
