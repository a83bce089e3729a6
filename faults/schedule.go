package faults

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// Event is one entry of a Schedule: at fabric time At add
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
	ctx    context.Context
	sched  clock.Scheduler
	p      Placer
	onErr  func(error)
	timers []clock.Timer
	active map[int][]string // event index → the faults it placed, while applied
	// Applied and Cleared count the events applied and removed so far.
	Applied, Cleared int
}

// Start arms every event on sched at its fabric time (one already past
// at once) to place its fault through p — the same schedule on either
// clock; onErr (may be nil) is told of every failed add or remove, with
// the event in the message. ctx is the context of p's calls.
func (s *Schedule) Start(ctx context.Context, sched clock.Scheduler, p Placer, onErr func(error)) *Run {
	r := &Run{ctx: ctx, sched: sched, p: p, onErr: onErr, active: map[int][]string{}}
	now := sched.Now()
	for i, ev := range s.Events {
		r.timers = append(r.timers, sched.AfterFunc(clock.Time(ev.At).Sub(now), func() { r.apply(i, ev) }))
	}
	return r
}

func (r *Run) apply(i int, ev Event) {
	placed, err := r.p.Add(r.ctx, ev.Target, ev.Spec)
	if err != nil {
		r.fail(fmt.Errorf("fault schedule: %s: %w", ev, err))
		return
	}
	for _, pl := range placed {
		r.active[i] = append(r.active[i], pl.ID)
	}
	r.Applied++
	if ev.For > 0 {
		r.timers = append(r.timers, r.sched.AfterFunc(ev.For, func() { r.clear(i, ev) }))
	}
}

func (r *Run) clear(i int, ev Event) {
	ids, ok := r.active[i]
	if !ok {
		return
	}
	delete(r.active, i)
	if err := r.remove(ids); err != nil {
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
		ids := r.active[i]
		delete(r.active, i)
		if err := r.remove(ids); err != nil {
			r.fail(fmt.Errorf("fault schedule: stop: %w", err))
		}
	}
}

// remove takes the faults ids off.
func (r *Run) remove(ids []string) error {
	var errs []error
	for _, id := range ids {
		if _, err := r.p.Remove(r.ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
