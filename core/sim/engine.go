package sim

import (
	"math/rand/v2"

	"github.com/rocelab/rocelab/core/clock"
)

// Handler is the allocation-free alternative to a closure: Schedule stores
// the handler and its argument in the event, and the engine calls
// Handle(arg) when the event is due. Store pointers in arg: an any holding
// a pointer does not allocate.
//
// Handler is an alias of an unnamed interface so that models can use the
// fast path without importing this package: a model declares
//
//	interface {
//		ScheduleAfter(d clock.Duration, h interface{ Handle(arg any) }, arg any)
//	}
//
// and type-asserts its clock.Scheduler to it (see switchmodel).
type Handler = interface {
	Handle(arg any)
}

// Engine is a single-threaded discrete-event scheduler in virtual time. It
// implements clock.Scheduler. The zero value is not usable; call New.
type Engine struct {
	seed      uint64
	now       clock.Time
	seq       uint64
	seqLimit  uint64 // nextSeq's fast path ends here (see slowSeq)
	heap      keyHeap
	slots     []payload // indexed by key.slot
	free      []uint32  // unused indices of slots
	cancelled int       // cancelled timers still in heap
	executed  uint64
	stopped   bool
	slab      []funcTimer
	streams   map[string]*rand.Rand

	// In a Group (group.go): the group, this engine's index in it, the
	// events run in the current window, and the events for other engines.
	grp     *Group
	id      int
	log     []logEntry
	mail    []letter
	lastRan uint64 // events run in the last window
}

var _ clock.Scheduler = (*Engine)(nil)

// New returns an engine at time 0 whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{seed: seed, heap: newKeyHeap(), streams: make(map[string]*rand.Rand), seqLimit: maxSeq}
}

// Seed returns the seed the engine was created with.
func (e *Engine) Seed() uint64 { return e.seed }

// Now returns the current virtual time.
func (e *Engine) Now() clock.Time { return e.now }

// AfterFunc runs f once at Now+d. d <= 0 runs f at Now, after the events
// already due at Now. The returned Timer's Stop cancels it.
func (e *Engine) AfterFunc(d clock.Duration, f func()) clock.Timer {
	return e.At(e.after(d), f)
}

// after returns Now+d, with d <= 0 meaning Now and saturating at
// clock.Never instead of overflowing.
func (e *Engine) after(d clock.Duration) clock.Time {
	if d <= 0 {
		return e.now
	}
	if d > clock.Never.Sub(e.now) {
		return clock.Never
	}
	return e.now.Add(d)
}

// At runs f once at time t. A t earlier than Now is not an error: it is
// clamped to Now, so f runs after the events already due at Now.
func (e *Engine) At(t clock.Time, f func()) clock.Timer {
	ft := e.newTimer(f)
	ft.slot = e.push(t, payload{h: ft})
	return ft
}

// Schedule calls h.Handle(arg) at time t (clamped to Now like At). It is
// the allocation-free path: no closure, no timer handle. A Schedule event
// cannot be cancelled; a handler that may be stale when it fires must check
// its own state.
func (e *Engine) Schedule(t clock.Time, h Handler, arg any) {
	if h == nil {
		panic("sim: Schedule with a nil handler")
	}
	e.push(t, payload{h: h, arg: arg})
}

// push stores p in a free slot and queues it at t (clamped to Now); it
// returns the slot.
func (e *Engine) push(t clock.Time, p payload) uint32 {
	s := e.slot(p)
	e.heap.push(key{at: max(t, e.now), ord: e.nextSeq()<<slotBits | uint64(s)})
	return s
}

// slot stores p in a free slot and returns it.
func (e *Engine) slot(p payload) uint32 {
	if n := len(e.free); n > 0 {
		s := e.free[n-1]
		e.free = e.free[:n-1]
		e.slots[s] = p
		return s
	}
	if len(e.slots) > slotMask {
		panic("sim: more than 2^28 pending events")
	}
	e.slots = append(e.slots, p)
	return uint32(len(e.slots) - 1)
}

// nextSeq hands out the next insertion sequence. Past seqLimit it takes
// the slow path: renumbering before the sequences overflow, or, for an
// engine in a Group between windows, a final sequence from the group
// (inside a window an engine numbers provisionally, and the group
// translates at the window's end).
func (e *Engine) nextSeq() uint64 {
	if e.seq >= e.seqLimit {
		return e.slowSeq()
	}
	s := e.seq
	e.seq++
	return s
}

func (e *Engine) slowSeq() uint64 {
	if e.grp != nil && !e.grp.inWindow {
		return e.grp.finalSeq()
	}
	if e.grp != nil {
		panic("sim: a group ran out of insertion sequences")
	}
	e.seq = e.heap.renumber()
	s := e.seq
	e.seq++
	return s
}

// release clears slot s and returns it to the free list.
func (e *Engine) release(s uint32) {
	e.slots[s] = payload{}
	e.free = append(e.free, s)
}

// ScheduleAfter is Schedule at Now+d (d <= 0 means Now).
func (e *Engine) ScheduleAfter(d clock.Duration, h Handler, arg any) {
	e.Schedule(e.after(d), h, arg)
}

// Pending returns how many events are waiting to run (cancelled timers
// excluded).
func (e *Engine) Pending() int { return e.heap.len() - e.cancelled }

// Executed returns how many events have run so far (cancelled timers
// excluded).
func (e *Engine) Executed() uint64 { return e.executed }

// Stop makes the Run or RunUntil in progress return after the current
// event. Each Run, RunUntil and RunFor starts unstopped, so a Stop called
// while no run is in progress has no effect. On an engine of a Group it
// stops the group's run: right after the event in a serial window, at the
// window's end in a parallel one (see Group.RunUntil).
func (e *Engine) Stop() { e.stopped = true }

// skipCancelled pops cancelled timers off the top of the heap and reports
// whether a live event remains.
func (e *Engine) skipCancelled() bool {
	for e.heap.len() > 0 {
		s := e.heap[root].slot()
		if e.slots[s].h != nil {
			return true // a cancelled timer's payload is empty
		}
		e.heap.pop()
		e.release(s)
		e.cancelled--
	}
	return false
}

// Next returns the time of the next event to run and true, or false when
// none is pending: what a driver on the wall clock sleeps until. (It
// drops cancelled timers off the top of the queue first.)
func (e *Engine) Next() (clock.Time, bool) {
	if !e.skipCancelled() {
		return 0, false
	}
	return e.heap[root].at, true
}

// Step runs the next event, advancing Now to its time. It reports false,
// and does nothing, when no event is pending.
func (e *Engine) Step() bool {
	if !e.skipCancelled() {
		return false
	}
	e.step()
	return true
}

// step runs the event at the top of the heap, which must be live.
func (e *Engine) step() {
	k := e.heap.pop()
	ev := e.slots[k.slot()]
	e.release(k.slot())
	e.now = k.at
	e.executed++
	first := e.seq
	if e.heap.len() > 0 {
		// Most often the next event to run: let it ask for its memory now
		// (a cancelled one's empty payload is no Prefetcher).
		if next := &e.slots[e.heap[root].slot()]; next.h != nil {
			if pf, ok := next.h.(Prefetcher); ok {
				pf.Prefetch(next.arg)
			}
		}
	}
	ev.h.Handle(ev.arg)
	// In a group's window, the event is logged for the merge if it took
	// insertion sequences (see Group.merge): one that took none changes
	// nothing the merge hands out (7 % of permutation-ecmp's events).
	if e.seq != first && e.grp != nil && e.grp.inWindow {
		e.log = append(e.log, logEntry{at: k.at, seq: k.ord >> slotBits, first: first})
	}
}

// A Prefetcher is a Handler that can ask ahead for the memory its next
// Handle(arg) will touch first (internal/prefetch). The engine calls
// Prefetch for the event at the head of its queue before it runs the one
// it popped, so that a cache miss the next event would wait on overlaps
// this one's work. Prefetch must change nothing: it is a hint.
type Prefetcher interface {
	Prefetch(arg any)
}

// Run runs events until none remain or Stop is called.
func (e *Engine) Run() {
	e.stopped = false
	for !e.stopped && e.Step() {
	}
}

// RunUntil runs every event due at or before t, then sets Now to t. If
// Stop is called first, it returns at once and Now stays at the time of the
// event that called Stop. A t before Now runs nothing and leaves Now alone:
// time never goes backwards.
func (e *Engine) RunUntil(t clock.Time) {
	e.stopped = false
	for !e.stopped && e.skipCancelled() && e.heap[root].at <= t {
		e.step()
	}
	if !e.stopped && t > e.now {
		e.now = t
	}
}

// RunFor is RunUntil(Now+d).
func (e *Engine) RunFor(d clock.Duration) { e.RunUntil(e.now.Add(d)) }
