package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/faults"
)

// recorder is a faults.Placer that records what a schedule asks of it.
type recorder struct {
	mu             sync.Mutex
	running        bool // a call is in progress: calls must not overlap
	adds, removes  []string
	overlap        bool
	added, removed chan struct{}
}

func (r *recorder) enter() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overlap = r.overlap || r.running
	r.running = true
}

func (r *recorder) leave() {
	time.Sleep(time.Millisecond) // a call takes a while, as an API call does
	r.mu.Lock()
	r.running = false
	r.mu.Unlock()
}

func (r *recorder) Add(_ context.Context, target string, s faults.Spec) ([]faults.Placed, error) {
	r.enter()
	defer r.leave()
	r.mu.Lock()
	r.adds = append(r.adds, target)
	r.mu.Unlock()
	r.added <- struct{}{}
	return []faults.Placed{{ID: target + "/f1", Spec: s.String(), Targets: []string{target}}}, nil
}

func (r *recorder) Remove(_ context.Context, id string) (faults.Placed, error) {
	r.enter()
	defer r.leave()
	r.mu.Lock()
	r.removes = append(r.removes, id)
	r.mu.Unlock()
	r.removed <- struct{}{}
	return faults.Placed{ID: id}, nil
}

func (r *recorder) List(context.Context) ([]faults.Placed, error) { return nil, nil }
func (r *recorder) Clear(context.Context) (int, error)            { return 0, nil }

// TestScheduleOnFabricClock: a fault schedule runs on a live lab's fabric
// clock as on the simulator's engine — each event placed at its fabric
// time, removed For later, never two calls at once — and Close ends the
// events not yet due. Waits are generous: a busy machine only delays.
func TestScheduleOnFabricClock(t *testing.T) {
	spec, err := faults.ParseSpec("loss 1%")
	if err != nil {
		t.Fatal(err)
	}
	sched := faults.Schedule{Events: []faults.Event{
		{At: 100 * clock.Microsecond, For: 100 * clock.Microsecond, Target: "sw1:p1", Spec: spec},
		{At: 100 * clock.Microsecond, For: 100 * clock.Microsecond, Target: "sw1:p2", Spec: spec},
		{At: 10 * clock.Second, Target: "sw1:p3", Spec: spec}, // 1000 s of wall clock: never due
	}}
	c := &FabricClock{Start: time.Now(), Scale: 100}
	r := &recorder{added: make(chan struct{}, 3), removed: make(chan struct{}, 3)}
	var errs []error
	var run *faults.Run
	c.Do(func() { run = sched.Start(t.Context(), c, r, func(err error) { errs = append(errs, err) }) })
	for _, ch := range []chan struct{}{r.added, r.added, r.removed, r.removed} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("schedule stuck: added %v, removed %v", r.adds, r.removes)
		}
	}
	if at := c.Now(); at < clock.Time(200*clock.Microsecond) {
		t.Errorf("both faults removed at fabric time %v, before 200µs", at)
	}
	c.Close(func() { run.Stop(false) })
	c.Close(nil) // a second Close is harmless
	c.mu.Lock()  // the callbacks wrote what follows under mu
	defer c.mu.Unlock()
	if r.overlap || len(errs) > 0 || run.Applied != 2 || run.Cleared != 2 || len(r.removes) != 2 {
		t.Errorf("overlap %v, errors %v, applied %d, cleared %d, removed %v", r.overlap, errs, run.Applied, run.Cleared, r.removes)
	}
}

// TestFabricClockClosed: after Close no callback runs, also one already
// due.
func TestFabricClockClosed(t *testing.T) {
	c := &FabricClock{Start: time.Now(), Scale: 1}
	ran := make(chan struct{}, 1)
	c.mu.Lock() // a callback is running
	c.AfterFunc(0, func() { ran <- struct{}{} })
	time.Sleep(10 * time.Millisecond) // the timer fires and waits for mu
	c.mu.Unlock()
	c.Close(nil)
	select {
	case <-ran:
		// It may have run before Close took mu: that is a callback that
		// ran while the clock was open.
	case <-time.After(50 * time.Millisecond):
	}
	c.AfterFunc(0, func() { ran <- struct{}{} })
	select {
	case <-ran:
		t.Error("a callback ran after Close")
	case <-time.After(50 * time.Millisecond):
	}
}

func TestStallWatch(t *testing.T) {
	never := newStallWatch(-1)
	soon := newStallWatch(time.Nanosecond)
	for range 3 {
		if never.stalled([3]int64{1}) {
			t.Error("a watch with a negative limit stalled")
		}
	}
	soon.stalled([3]int64{1})
	time.Sleep(time.Millisecond)
	if !soon.stalled([3]int64{1}) {
		t.Error("an unchanged key did not stall")
	}
	if soon.stalled([3]int64{2}) {
		t.Error("a changed key stalled")
	}
	if newStallWatch(0).limit != DefaultStall {
		t.Error("limit 0 is not DefaultStall")
	}
}

// TestFaultIDsAreInput: an ID that is not node/fN is the user's error,
// found before any lab is read.
func TestFaultIDsAreInput(t *testing.T) {
	p := (&Lab{Root: t.TempDir()}).Faults()
	for _, id := range []string{"f1", "/f1", "sw1/x", "sw1/"} {
		_, err := p.Remove(t.Context(), id)
		if !errors.As(err, new(*InputError)) {
			t.Errorf("Remove(%q) = %v, want an InputError", id, err)
		}
	}
}
