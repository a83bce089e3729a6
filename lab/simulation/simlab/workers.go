package simlab

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/topologies"
)

// A lab of several partitions (Options.Partitions, or Workers > 1) runs on
// a sim.Group: its nodes are cut into partitions by zone (a pod and its
// racks stay together; switches of no zone, the core, are dealt round
// robin, and other nodes of no zone go with their switch), or, when the
// partitions asked for are at least twice the zones and every zone numbers
// its racks, by groups of consecutive racks within each zone (a rack's
// hosts and leaf together, the zone's spines dealt round robin over them),
// each on its own engine, and the links between partitions become pipes
// across engines, run on Workers goroutines. The group
// runs in windows of the least delay of a link between partitions, and its
// run is bit-for-bit the one-engine run: same digests, same counters.
//
// What reads or starts several partitions at once runs as the group's
// global events (a job's start, a perf job's deadline). What a partition
// tells the lab (a flow finished) goes through mu. What a window run in
// parallel cannot do exactly is act on several partitions right after an
// event: stop the run, or start a collective's next iteration on every
// rank. So a window runs serially whenever every job might finish in it
// (mayFinish), or a collective might end an iteration in it (coordinating):
// neither can then fall in a parallel window, and a collective's
// coordinator schedules on the lab, a global event, from the serial one
// (sim.Group.At). A job that fails (a QP in error) stops the run at the
// end of its window, and the run returns the job's error, so no failed run
// is compared.

// partsPerWorker is how many partitions each worker runs at least,
// handed out busiest first in each window (see sim.NewGroup), and
// minParts how many a lab is cut into at least: on two workers, once the
// workers stopped parking between windows, 16 beat 8 (0.93 on
// permutation-ecmp, 0.84-0.91 on the all-reduce), and once the heap was
// reserved ahead 16 beat 8 on one core too (0.89 on permutation-ecmp,
// 0.86 on the sprayed one, the all-reduce alike; docs/performance.md).
const (
	partsPerWorker = 8
	minParts       = 16
)

// DefaultPartitions is how many engines a lab on workers goroutines is
// cut into when Options.Partitions does not say (at most one per zone, or
// per group of racks; see partition).
func DefaultPartitions(workers int) int { return max(minParts, partsPerWorker*workers) }

// errOneEngine is what jobs a partitioned lab cannot run say.
var errOneEngine = errors.New("runs on one engine only (simlab Options.Workers and Partitions 1): it connects its ranks' queue pairs as it goes")

// workers holds what a partitioned lab adds.
type workers struct {
	g  *sim.Group
	n  int // goroutines
	of map[*topologies.Node]*sim.Engine
	mu sync.Mutex // the jobs' and the lab's counters of finished work
}

// partition cuts t's nodes over n engines (by zone, or by groups of racks
// when n is at least twice the zones) of a new group on goroutines
// goroutines, or returns nil when the cut cannot be made: fewer than two
// zones or engines, or a link between partitions without delay (no
// lookahead to run windows on).
func partition(t *topologies.Topology, n, goroutines int, seed uint64) (*workers, error) {
	zones := map[int]bool{}
	racks := map[int]int{} // the highest rack number of each zone
	for _, nd := range t.Nodes {
		if nd.Zone > 0 {
			zones[nd.Zone] = true
			racks[nd.Zone] = max(racks[nd.Zone], nd.Rack)
		}
	}
	if n < 2 || len(zones) < 2 {
		return nil, nil
	}
	// With at least twice as many partitions asked for as zones, each
	// zone is cut into per groups of consecutive racks when every zone
	// numbers its racks (a rack's hosts and leaf together, the zone's
	// spines dealt round robin over its groups): the 2,048-GPU cluster's
	// four zones on two workers were four engines for two goroutines, and
	// whichever finished its second first waited for the other in every
	// window.
	per := 1
	if n >= 2*len(zones) {
		per = n / len(zones)
		for _, r := range racks {
			if r < 1 {
				per = 1 // a zone without racks: cut by zone only
				break
			}
			per = min(per, r)
		}
	}
	n = min(n, len(zones)*per)
	part := make(map[*topologies.Node]int, len(t.Nodes))
	core := 0
	spines := map[int]int{} // per zone, its rackless nodes dealt so far
	for _, nd := range t.Nodes {
		switch {
		case nd.Zone > 0 && per == 1:
			part[nd] = (nd.Zone - 1) % n
		case nd.Zone > 0 && nd.Rack > 0:
			part[nd] = (nd.Zone-1)*per + (nd.Rack-1)*per/racks[nd.Zone]
		case nd.Zone > 0:
			part[nd] = (nd.Zone-1)*per + spines[nd.Zone]%per
			spines[nd.Zone]++
		case nd.Kind == topologies.KindSwitch:
			part[nd] = core % n
			core++
		}
	}
	// A node of no zone that is not a switch (a front-end host, a storage
	// node) runs with the switch it is linked to first, so that a NIC and
	// its switch share an engine: what a run attaches to both ends of a
	// NIC's link (lab/scenarios/run's traffic generators, which hear the
	// switch's PFC) then needs no letter between engines.
	for _, nd := range t.Nodes {
		if _, ok := part[nd]; ok {
			continue
		}
		part[nd] = -1
		for _, p := range nd.Ports {
			if p.Peer == nil {
				continue
			}
			if q, ok := part[p.Peer.Node]; ok && q >= 0 {
				part[nd] = q
				break
			}
		}
		if part[nd] < 0 {
			part[nd] = core % n
			core++
		}
	}
	// The lookahead is the least delay of a link between partitions, and
	// no more than twice the least of any link: a window must be shorter
	// than an acknowledgement's way back (see Flow.busy).
	lookahead, least := clock.Duration(-1), clock.Duration(-1)
	for _, l := range t.Links {
		if part[l.A.Node] != part[l.B.Node] && (lookahead < 0 || l.Delay < lookahead) {
			lookahead = l.Delay
		}
		if least < 0 || l.Delay < least {
			least = l.Delay
		}
	}
	lookahead = min(lookahead, 2*least)
	if lookahead <= 0 {
		return nil, nil
	}
	g, err := sim.NewGroup(seed, n, goroutines, lookahead)
	if err != nil {
		return nil, err
	}
	w := &workers{g: g, n: goroutines, of: make(map[*topologies.Node]*sim.Engine, len(t.Nodes))}
	for nd, p := range part {
		w.of[nd] = g.Engine(p)
	}
	return w, nil
}

// Workers returns how many goroutines the lab runs on (1 without a
// group), and Partitions how many engines.
func (l *Lab) Workers() int {
	if l.w == nil {
		return 1
	}
	return min(l.w.n, l.w.g.Len())
}

// Partitions returns how many engines the lab's nodes are cut over.
func (l *Lab) Partitions() int {
	if l.w == nil {
		return 1
	}
	return l.w.g.Len()
}

// Close stops the goroutines of a lab that runs on several workers; the
// lab stays readable. It does nothing for a one-worker lab.
func (l *Lab) Close() {
	if l.w != nil {
		l.w.g.Close()
	}
}

// EngineOf returns the engine node n runs on: the lab's one engine, or
// its partition's when the lab runs on several workers. What acts on a
// node's own traffic (a fault on a link it sends on) schedules there.
func (l *Lab) EngineOf(n *topologies.Node) *sim.Engine { return l.engineOf(n) }

func (l *Lab) engineOf(n *topologies.Node) *sim.Engine {
	if l.w == nil {
		return l.e
	}
	return l.w.of[n]
}

// now returns the fabric time.
func (l *Lab) now() clock.Time {
	if l.w == nil {
		return l.e.Now()
	}
	return l.w.g.Now()
}

// at runs f at t, alone: a global event of the group, or the engine's At.
func (l *Lab) at(t clock.Time, f func()) clock.Timer {
	if l.w == nil {
		return l.e.At(t, f)
	}
	return l.w.g.At(t, f)
}

// At runs f at fabric time t with the whole lab still (a global event of
// the group when the lab runs on several workers): the place for what
// reads every switch and NIC, or starts work on several. The timer's Stop
// cancels it.
func (l *Lab) At(t clock.Time, f func()) clock.Timer { return l.at(t, f) }

// AfterFunc is At(Now()+d, f): with Now, it makes the Lab a
// clock.Scheduler for what must act on the whole lab (a fault timeline).
func (l *Lab) AfterFunc(d clock.Duration, f func()) clock.Timer {
	return l.at(l.now().Add(max(d, 0)), f)
}

// runUntil runs the lab's engines until t (or a stop).
func (l *Lab) runUntil(t clock.Time) {
	if l.w == nil {
		l.e.RunUntil(t)
		return
	}
	l.w.g.RunUntil(t)
}

// pending returns how many events wait.
func (l *Lab) pending() int {
	if l.w == nil {
		return l.e.Pending()
	}
	return l.w.g.Pending()
}

// Executed returns how many events the lab's engines have run.
func (l *Lab) Executed() uint64 {
	if l.w == nil {
		return l.e.Executed()
	}
	return l.w.g.Executed()
}

// stop makes the run in progress return after the current event.
func (l *Lab) stop() {
	if l.w == nil {
		l.e.Stop()
		return
	}
	l.w.g.Stop()
}

// lock and unlock guard what partitions report to the lab; free without
// workers.
func (l *Lab) lock() {
	if l.w != nil {
		l.w.mu.Lock()
	}
}

func (l *Lab) unlock() {
	if l.w != nil {
		l.w.mu.Unlock()
	}
}

// serial reports whether the window starting at start must run serially
// (sim.Group.Serial).
func (l *Lab) serial(start clock.Time) bool { return l.coordinating() || l.mayFinish(start) }

// coordinator is a collective job (CollJob, HierJob): one coordinator
// that starts and ends iterations on all its ranks at once.
type coordinator interface {
	job
	// mayEnd reports whether the job might end an iteration (or a phase,
	// or itself) in the next window.
	mayEnd() bool
}

// coordinating reports whether a collective job might end an iteration in
// the next window, starting the next one on every rank at once.
func (l *Lab) coordinating() bool {
	for _, j := range l.jobs {
		if c, ok := j.(coordinator); ok && c.mayEnd() {
			return true
		}
	}
	return false
}

// mayFinish reports whether every running job might finish in the window
// starting at start, so that it must run serially. A collective that
// still expects an arrival cannot (coordinating). A perf job cannot
// finish in a window that ends before its deadline, nor while one of its
// flows has a QP with a packet never sent: that packet's acknowledgement
// is at least a round trip of two links away, longer than a window.
func (l *Lab) mayFinish(start clock.Time) bool {
	if l.running == 0 || !l.stopIdle {
		return false
	}
	end := start.Add(l.w.g.Lookahead())
	for _, j := range l.jobs {
		switch j := j.(type) {
		case *PerfJob:
			if !j.Done() && !j.mayFinish(end) {
				return false
			}
		case coordinator:
			// One that might end is serial already (coordinating).
			if !j.Done() {
				return false
			}
		}
	}
	return true
}

// mayFinish reports whether the job might finish before end.
func (j *PerfJob) mayFinish(end clock.Time) bool {
	if !j.started || j.spec.Duration > 0 && end < j.deadline {
		return false
	}
	if j.witness != nil && !j.witness.finished && j.witness.busy() {
		return false
	}
	for _, f := range j.flows {
		if !f.finished && f.busy() {
			j.witness = f
			return false
		}
	}
	return true
}

// busy reports whether the flow has work that cannot complete within a
// window: a QP with a message still to post, a packet never sent, or (a
// WRITE or SEND) data its responder has yet to take, whose
// acknowledgement is then at least two links away.
func (f *Flow) busy() bool {
	j := f.j
	for _, q := range f.qps {
		if q.finished {
			continue
		}
		if j.spec.Duration == 0 && q.posted < j.spec.Iterations || q.C.Unsent() {
			return true
		}
		if j.write != endpoint.WRRead && q.S.Stats().RxDataBytes < int64(q.posted)*int64(j.spec.Size) {
			return true
		}
	}
	return false
}

// checkOneEngine refuses a job kind a partitioned lab cannot run.
func (l *Lab) checkOneEngine(kind string) error {
	if l.w != nil {
		return fmt.Errorf("a %s %w", kind, errOneEngine)
	}
	return nil
}
