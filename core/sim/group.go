package sim

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/rocelab/rocelab/core/clock"
)

// A Group runs several engines side by side, one partition of a model each,
// conservatively: in windows no longer than the lookahead, the least delay
// of any event one engine schedules on another (a link's propagation delay,
// when a fabric is cut along links). Within a window the engines run at
// once on their own goroutines; nothing one of them does can reach another
// before the window ends.
//
// A group's run is bit-for-bit the run of one engine holding every model:
// the same events, in the same order, in each partition. Ties at one
// picosecond are where that takes care. One engine orders them by insertion
// sequence, and an insertion's place in the one global sequence depends on
// what the other partitions did at the same time. So inside a window each
// engine numbers its insertions provisionally and logs the events it ran;
// at the window's end the group merges the logs in (time, sequence) order,
// which is the order one engine would have run them in, and hands out the
// final sequences in that order. An event's pusher always ran before it in
// its own partition, so its final sequence is known by the time the merge
// needs it. The engines' pending keys are then renumbered in place (the
// renumbering keeps each heap's order, so no heap is rebuilt), and the
// letters between engines are handed over with their final tickets.
//
// Insertions made between runs (a driver setting up flows) take final
// sequences at once, in call order, as they would on one engine.
type Group struct {
	engines   []*Engine
	lookahead clock.Duration
	next      uint64 // the next final insertion sequence
	inWindow  bool
	windows   uint64       // windows run; the current or last one's number
	base      uint64       // the last window's first sequence
	maps      [][]uint64   // per engine: provisional sequence - base → final
	heads     []int        // per engine: the next log entry to merge
	mergeHeap keyHeap      // merge's heap of the engines' next entries, kept for its capacity
	hand      *handoff     // the windows' start and end with the workers
	order     []*Engine    // the engines in the order windows hand them out
	taken     atomic.Int64 // how many of order this window handed out
	globals   []*global    // Group.At events, in order
	stopped   atomic.Bool  // Stop may be called from a window's goroutines
	// globalRuns counts the global events run.
	globalRuns uint64
	// Serial, if set, is asked before each window, which starts at start
	// and ends before start plus the lookahead, whether it must run
	// serially (see RunUntil).
	Serial func(start clock.Time) bool
	closed bool
}

// logEntry is one event an engine ran in the current window that took
// insertion sequences (the others change nothing the merge does): when, its
// sequence (final, or provisional in this engine), and the first
// provisional sequence its handler took.
type logEntry struct {
	at    clock.Time
	seq   uint64
	first uint64
}

// NewGroup returns n engines at time 0 whose random streams derive from
// seed (engine i's Rand(name) draws what one engine's would), running in
// windows of lookahead on workers goroutines (at most n; the caller's is
// one of them). With more engines than workers, each window hands the
// engines out busiest first (by the events each ran in the last window),
// so that a partition that happens to carry more traffic does not keep
// the others waiting. Close the group when done, to stop its goroutines.
func NewGroup(seed uint64, n, workers int, lookahead clock.Duration) (*Group, error) {
	if n < 1 || workers < 1 {
		return nil, fmt.Errorf("sim: a group of %d engines on %d workers", n, workers)
	}
	if lookahead <= 0 {
		return nil, fmt.Errorf("sim: a group needs a positive lookahead, got %v", lookahead)
	}
	g := &Group{lookahead: lookahead, maps: make([][]uint64, n), heads: make([]int, n), mergeHeap: newKeyHeap()}
	for i := range n {
		e := New(seed)
		e.grp, e.id, e.seqLimit = g, i, 0
		g.engines = append(g.engines, e)
	}
	g.order = slices.Clone(g.engines)
	g.hand = newHandoff(min(workers, n) - 1)
	for i := range min(workers, n) - 1 {
		go g.worker(i)
	}
	return g, nil
}

// Close stops the group's goroutines; the engines stay readable.
func (g *Group) Close() {
	if g.closed {
		return
	}
	g.closed = true
	g.hand.close()
}

func (g *Group) worker(i int) {
	var gen uint64
	for {
		var bound key
		var ok bool
		if gen, bound, ok = g.hand.next(i, gen); !ok {
			return
		}
		g.runEngines(bound)
		g.hand.finish()
	}
}

// runEngines takes engines off the window's list until none is left and
// runs each up to bound.
func (g *Group) runEngines(bound key) {
	for {
		i := int(g.taken.Add(1)) - 1
		if i >= len(g.order) {
			return
		}
		e := g.order[i]
		before := e.executed
		e.runWindow(bound)
		e.lastRan = e.executed - before
	}
}

// Engine returns engine i.
func (g *Group) Engine(i int) *Engine { return g.engines[i] }

// Len returns how many engines the group has.
func (g *Group) Len() int { return len(g.engines) }

// Lookahead returns the least delay of an event between two engines.
func (g *Group) Lookahead() clock.Duration { return g.lookahead }

// Executed returns how many events the engines have run, global ones
// included.
func (g *Group) Executed() uint64 {
	n := g.globalRuns
	for _, e := range g.engines {
		n += e.executed
	}
	return n
}

// Pending returns how many events wait in the engines, global ones
// included.
func (g *Group) Pending() int {
	n := len(g.globals)
	for _, e := range g.engines {
		n += e.Pending()
	}
	return n
}

// Now returns the time of the latest event run, or of the last RunUntil.
func (g *Group) Now() clock.Time {
	var t clock.Time
	for _, e := range g.engines {
		t = max(t, e.now)
	}
	return t
}

func (g *Group) finalSeq() uint64 {
	s := g.next
	g.next++
	return s
}

// runWindow runs every event whose key is before bound.
func (e *Engine) runWindow(bound key) {
	for e.skipCancelled() && e.heap[root].before(&bound) {
		e.step()
	}
}

// head returns the engine whose next live event comes first, or nil.
func (g *Group) head() *Engine {
	var best *Engine
	for _, e := range g.engines {
		if e.skipCancelled() && (best == nil || e.heap[root].before(&best.heap[root])) {
			best = e
		}
	}
	return best
}

// global is an event of the whole group (Group.At); it is its own Timer.
type global struct {
	g *Group
	k key // ord holds the sequence, shifted as an engine's keys are
	f func()
}

// Stop cancels the global event and reports whether it was pending.
func (gl *global) Stop() bool {
	for i, x := range gl.g.globals {
		if x == gl {
			gl.g.globals = append(gl.g.globals[:i], gl.g.globals[i+1:]...)
			return true
		}
	}
	return false
}

// At runs f at time t on the group's goroutine, between windows, where one
// engine would run it: after every event before it in the (time,
// sequence) order, before every event after it, with every engine's Now at
// t. It is the place for what reads or starts several partitions at once
// (starting a job, sampling every switch). Call it outside windows or
// from an event of a serial window (see RunUntil), never from a parallel
// one.
func (g *Group) At(t clock.Time, f func()) clock.Timer {
	if g.inWindow {
		panic("sim: Group.At inside a window")
	}
	t = max(t, g.Now())
	gl := &global{g: g, k: key{at: t, ord: g.finalSeq() << slotBits}, f: f}
	i := len(g.globals)
	g.globals = append(g.globals, gl)
	for i > 0 && gl.k.before(&g.globals[i-1].k) {
		g.globals[i] = g.globals[i-1]
		i--
	}
	g.globals[i] = gl
	return gl
}

// Stop makes the RunUntil in progress return: after the current event in
// a serial window or a global event, at the end of a parallel window
// (whatever the other engines ran after it in that window has run; see
// Serial).
func (g *Group) Stop() { g.stopped.Store(true) }

// RunUntil runs every event due at or before t, window by window, then
// sets Now to t, as Engine.RunUntil does on one engine. Before each window
// it asks Serial, when set, whether the window must run serially: one
// event at a time in the one-engine order on this goroutine, so that a
// Stop (Group.Stop or an engine's) takes effect right after the event that
// called it, as on one engine.
func (g *Group) RunUntil(t clock.Time) {
	g.stopped.Store(false)
	for _, e := range g.engines {
		e.stopped = false
	}
	for !g.stopped.Load() {
		e := g.head()
		if len(g.globals) > 0 && g.globals[0].k.at <= t && (e == nil || g.globals[0].k.before(&e.heap[root])) {
			g.runGlobal()
			continue
		}
		if e == nil || e.heap[root].at > t {
			break
		}
		bound := key{at: t, ord: ^uint64(0)}
		if end := e.heap[root].at.Add(g.lookahead - 1); end < t && end >= e.heap[root].at {
			bound.at = end
		}
		if len(g.globals) > 0 && g.globals[0].k.before(&bound) {
			bound = g.globals[0].k
		}
		if g.Serial != nil && g.Serial(e.heap[root].at) {
			g.serialWindow(bound)
		} else {
			g.window(bound)
		}
		for _, e := range g.engines {
			if e.stopped {
				g.stopped.Store(true)
			}
		}
	}
	if g.stopped.Load() {
		return
	}
	for _, e := range g.engines {
		e.now = max(e.now, t)
	}
}

func (g *Group) runGlobal() {
	gl := g.globals[0]
	g.globals = g.globals[1:]
	for _, e := range g.engines {
		e.now = max(e.now, gl.k.at)
	}
	g.globalRuns++
	gl.f()
}

// serialWindow runs the events before bound one at a time in the
// one-engine order, taking final sequences as it goes. An event may call
// At here (a coordinator acting on several partitions at once, now): the
// window then ends where the new global event falls, and RunUntil runs it
// in its place, as one engine would run the AfterFunc.
func (g *Group) serialWindow(bound key) {
	for {
		e := g.head()
		if e == nil || !e.heap[root].before(&bound) {
			return
		}
		if len(g.globals) > 0 && g.globals[0].k.before(&e.heap[root]) {
			return
		}
		e.step()
		if e.stopped || g.stopped.Load() {
			g.stopped.Store(true)
			return
		}
	}
}

// Run runs until no event is pending.
func (g *Group) Run() { g.RunUntil(clock.Never) }

// window runs one window up to bound on every engine at once, then merges.
func (g *Group) window(bound key) {
	base := g.next
	for _, e := range g.engines {
		e.seq, e.seqLimit, e.log, e.mail = base, maxSeq, e.log[:0], e.mail[:0]
	}
	g.windows++
	g.base = base
	g.inWindow = true
	if len(g.hand.workers) < len(g.engines)-1 {
		slices.SortStableFunc(g.order, func(a, b *Engine) int { return cmp.Compare(b.lastRan, a.lastRan) })
	}
	g.taken.Store(0)
	g.hand.start(bound)
	g.runEngines(bound)
	g.hand.awaitWorkers()
	g.inWindow = false
	for _, e := range g.engines {
		e.seqLimit = 0
	}
	g.merge(base)
}

// merge hands out the final sequences of the window in the one-engine
// order, renumbers the pending keys and hands over the letters between
// engines. The logs are merged through a small heap of the engines' next
// entries (by time and final sequence): an entry's final sequence is known
// once its pusher, an earlier entry of its own engine, has been merged.
func (g *Group) merge(base uint64) {
	g.sizeMaps(base)
	final := func(i int, seq uint64) uint64 {
		if seq < base {
			return seq
		}
		return g.maps[i][seq-base]
	}
	// The heap's keys are the engines' next entries: (time, final
	// sequence), with the engine's index in the slot bits.
	head := func(i, h int) key {
		l := &g.engines[i].log[h]
		return key{at: l.at, ord: final(i, l.seq)<<slotBits | uint64(i)}
	}
	hs := g.mergeHeap[:root]
	for i, e := range g.engines {
		if len(e.log) > 0 {
			hs.push(head(i, 0))
		}
	}
	for hs.len() > 0 {
		i := int(hs[root].ord & slotMask)
		e := g.engines[i]
		h := g.heads[i]
		end := e.seq
		if h+1 < len(e.log) {
			end = e.log[h+1].first
		}
		m := g.maps[i]
		for s := e.log[h].first; s < end; s++ {
			m[s-base] = g.next
			g.next++
		}
		h++
		g.heads[i] = h
		if h < len(e.log) {
			hs.replaceTop(head(i, h))
		} else {
			hs.pop()
		}
	}
	g.mergeHeap = hs
	g.apply(base)
}

// sizeMaps makes each engine's map hold the provisional sequences it took
// in the window, and rewinds the merge's heads.
func (g *Group) sizeMaps(base uint64) {
	for i, e := range g.engines {
		n := int(e.seq - base)
		if cap(g.maps[i]) < n {
			g.maps[i] = make([]uint64, n, n+n/4)
		}
		g.maps[i] = g.maps[i][:n]
		g.heads[i] = 0
	}
}

// apply renumbers the engines' pending keys by the maps and hands over
// the letters between engines with their final tickets.
func (g *Group) apply(base uint64) {
	for i, e := range g.engines {
		m := g.maps[i]
		for j := root; j < len(e.heap); j++ {
			k := &e.heap[j]
			if s := k.ord >> slotBits; s >= base {
				k.ord = m[s-base]<<slotBits | k.ord&slotMask
			}
		}
	}
	for i, e := range g.engines {
		for _, m := range e.mail {
			m.m.Arrive(m.at, m.arg, Ticket{seq: g.maps[i][m.seq-base], final: true})
		}
		clear(e.mail)
	}
	if g.next >= maxSeq {
		panic("sim: a group ran out of insertion sequences")
	}
}
