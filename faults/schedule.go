package faults

import (
	"fmt"
	"maps"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// Applier puts faults on targets and takes them off: an Injector, or the
// emulation's node API.
type Applier interface {
	Add(target string, s Spec) (ID, error)
	Remove(id ID) error
}

// Event is one entry of a Schedule: at At (from the schedule's start) add
// Spec on Target; if For > 0, remove it For later.
type Event struct {
	At     clock.Duration
	For    clock.Duration
	Target string
	Spec   Spec
}

// String formats e as "at 1ms for 2ms leaf1:p1 loss 1%".
func (e Event) String() string {
	s := "at " + e.At.String()
	if e.For > 0 {
		s += " for " + e.For.String()
	}
	return s + " " + e.Target + " " + e.Spec.String()
}

// Schedule is a timed list of faults.
type Schedule struct {
	Events []Event
}

// Run is a started Schedule.
type Run struct {
	sched  clock.Scheduler
	a      Applier
	onErr  func(error)
	timers []clock.Timer
	active map[int]ID // event index → fault id while applied
	// Applied and Cleared count the events applied and removed so far.
	Applied, Cleared int
}

// Start arms every event on sched, relative to now; onErr (may be nil)
// is told of every failed add or remove, with the event in the message.
func (s *Schedule) Start(sched clock.Scheduler, a Applier, onErr func(error)) *Run {
	r := &Run{sched: sched, a: a, onErr: onErr, active: map[int]ID{}}
	for i, ev := range s.Events {
		r.timers = append(r.timers, sched.AfterFunc(ev.At, func() { r.apply(i, ev) }))
	}
	return r
}

func (r *Run) apply(i int, ev Event) {
	id, err := r.a.Add(ev.Target, ev.Spec)
	if err != nil {
		r.fail(fmt.Errorf("fault schedule: %s: %w", ev, err))
		return
	}
	r.Applied++
	r.active[i] = id
	if ev.For > 0 {
		r.timers = append(r.timers, r.sched.AfterFunc(ev.For, func() { r.clear(i, ev) }))
	}
}

func (r *Run) clear(i int, ev Event) {
	id, ok := r.active[i]
	if !ok {
		return
	}
	delete(r.active, i)
	if err := r.a.Remove(id); err != nil {
		r.fail(fmt.Errorf("fault schedule: clear %s: %w", ev, err))
		return
	}
	r.Cleared++
}

func (r *Run) fail(err error) {
	if r.onErr != nil {
		r.onErr(err)
	}
}

// Stop cancels the events not yet due. Faults already applied stay; with
// clear set they are removed too.
func (r *Run) Stop(clear bool) {
	for _, t := range r.timers {
		t.Stop()
	}
	r.timers = nil
	if !clear {
		return
	}
	for _, i := range slices.Sorted(maps.Keys(r.active)) {
		id := r.active[i]
		delete(r.active, i)
		if err := r.a.Remove(id); err != nil {
			r.fail(fmt.Errorf("fault schedule: stop: %w", err))
		}
	}
}
