package sim

import "github.com/rocelab/rocelab/core/clock"

type timerState uint8

const (
	timerPending timerState = iota
	timerFired
	timerCancelled
)

// funcTimer is the handle AfterFunc and At return. It stays valid after the
// callback ran: Stop then reports false.
type funcTimer struct {
	e     *Engine
	f     func()
	slot  uint32 // the event's payload slot while pending
	state timerState
}

var _ clock.Timer = (*funcTimer)(nil)

// Handle runs the callback: the timer's event is due.
func (t *funcTimer) Handle(any) {
	f := t.f
	t.f = nil
	t.state = timerFired
	f()
}

// Stop cancels the callback and reports whether it was still pending.
func (t *funcTimer) Stop() bool {
	if t.state != timerPending {
		return false
	}
	t.state = timerCancelled
	t.f = nil
	// An empty payload marks the event cancelled, so the engine finds out
	// from the slot it reads anyway, without touching the timer.
	t.e.slots[t.slot] = payload{}
	t.e.cancelled++
	t.e.maybeCompact()
	return true
}

// timerSlab is how many timer handles are allocated at once.
const timerSlab = 128

// newTimer carves a handle out of the current slab. A slab stays alive while
// any of its handles is referenced; handles drop their callback when they
// fire or are stopped, so a live slab holds no closures.
func (e *Engine) newTimer(f func()) *funcTimer {
	if len(e.slab) == 0 {
		e.slab = make([]funcTimer, timerSlab)
	}
	t := &e.slab[0]
	e.slab = e.slab[1:]
	t.e = e
	t.f = f
	return t
}

// minCompact is the heap size under which cancelled events are never
// compacted away (they cost less than the rebuild).
const minCompact = 256

// maybeCompact rebuilds the heap without cancelled events once they are
// more than half of it; amortised over the Stops that caused it, O(log n).
func (e *Engine) maybeCompact() {
	if e.cancelled < minCompact || 2*e.cancelled <= len(e.heap) {
		return
	}
	e.heap.filter(func(k key) bool {
		if e.slots[k.slot()].h == nil {
			e.release(k.slot())
			return false
		}
		return true
	})
	e.cancelled = 0
}
