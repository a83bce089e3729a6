package sim

import (
	"cmp"
	"math"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
)

// recorder collects labels in the order callbacks run.
type recorder struct {
	e   *Engine
	got []string
}

func (r *recorder) add(label string) func() {
	return func() { r.got = append(r.got, label+"@"+r.e.Now().String()) }
}

func TestOrdering(t *testing.T) {
	type sched struct {
		label string
		at    clock.Time
	}
	tests := []struct {
		name  string
		sched []sched
		want  []string
	}{
		{"equal times run by insertion", []sched{{"a", 5}, {"b", 5}, {"c", 5}},
			[]string{"a@5ps", "b@5ps", "c@5ps"}},
		{"time first, then insertion", []sched{{"late", 9}, {"x", 3}, {"y", 9}, {"z", 3}},
			[]string{"x@3ps", "z@3ps", "late@9ps", "y@9ps"}},
		{"reverse order", []sched{{"3", 3}, {"2", 2}, {"1", 1}, {"0", 0}},
			[]string{"0@0s", "1@1ps", "2@2ps", "3@3ps"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New(1)
			r := &recorder{e: e}
			for _, s := range tc.sched {
				e.At(s.at, r.add(s.label))
			}
			e.Run()
			if d := gocmp.Diff(tc.want, r.got); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
			if e.Executed() != uint64(len(tc.want)) || e.Pending() != 0 {
				t.Errorf("Executed=%d Pending=%d", e.Executed(), e.Pending())
			}
		})
	}
}

func TestAfterFuncZero(t *testing.T) {
	e := New(1)
	r := &recorder{e: e}
	e.At(10, func() {
		r.got = append(r.got, "first")
		e.AfterFunc(0, r.add("zero")) // after "second", already due at 10
		e.AfterFunc(-5, r.add("neg")) // same as 0
		e.At(3, r.add("past"))        // clamped to Now
		e.AfterFunc(1, r.add("one"))
		e.AfterFunc(math.MaxInt64, r.add("never")) // saturates, no overflow
	})
	e.At(10, r.add("second"))
	e.Run()
	want := []string{"first", "second@10ps", "zero@10ps", "neg@10ps", "past@10ps", "one@11ps",
		"never@" + clock.Never.String()}
	if d := gocmp.Diff(want, r.got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

func TestTimerStop(t *testing.T) {
	tests := []struct {
		name      string
		stopAt    clock.Time // when Stop is called (via an event); -1 = before running
		fireAt    clock.Time
		wantStop  bool
		wantFired bool
	}{
		{"stop before run", -1, 10, true, false},
		{"stop earlier in time", 5, 10, true, false},
		{"stop at same time, scheduled first", 10, 10, true, false},
		{"stop after firing", 20, 10, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New(1)
			var gotStop *bool
			fired := false
			var tm clock.Timer
			stop := func() { s := tm.Stop(); gotStop = &s }
			if tc.stopAt >= 0 {
				e.At(tc.stopAt, stop) // scheduled before the timer: runs first on ties
			}
			tm = e.At(tc.fireAt, func() { fired = true })
			if tc.stopAt < 0 {
				stop()
			}
			e.Run()
			if gotStop == nil || *gotStop != tc.wantStop || fired != tc.wantFired {
				t.Errorf("Stop=%v fired=%v, want %v %v", gotStop, fired, tc.wantStop, tc.wantFired)
			}
			if tm.Stop() {
				t.Error("second Stop reported pending")
			}
			if e.Pending() != 0 {
				t.Errorf("Pending=%d", e.Pending())
			}
		})
	}
}

func TestStopCountsAndCompaction(t *testing.T) {
	e := New(1)
	const n = 10000
	timers := make([]clock.Timer, n)
	ran := 0
	for i := range n {
		timers[i] = e.AfterFunc(clock.Duration(i+1), func() { ran++ })
	}
	for i := 0; i < n; i += 4 { // keep every 4th
		for j := 1; j < 4 && i+j < n; j++ {
			if !timers[i+j].Stop() {
				t.Fatalf("Stop(%d) = false", i+j)
			}
		}
	}
	if got := e.Pending(); got != n/4 {
		t.Errorf("Pending=%d, want %d", got, n/4)
	}
	if e.heap.len() > n/2 {
		t.Errorf("heap holds %d entries for %d pending: cancelled timers not compacted", e.heap.len(), e.Pending())
	}
	e.Run()
	if ran != n/4 || e.Executed() != n/4 {
		t.Errorf("ran=%d Executed=%d, want %d", ran, e.Executed(), n/4)
	}
}

func TestRunUntil(t *testing.T) {
	e := New(1)
	r := &recorder{e: e}
	for _, at := range []clock.Time{5, 10, 15} {
		e.At(at, r.add("e"))
	}
	e.RunUntil(10)
	if e.Now() != 10 || len(r.got) != 2 || e.Pending() != 1 {
		t.Fatalf("after RunUntil(10): Now=%v ran=%v pending=%d", e.Now(), r.got, e.Pending())
	}
	e.RunUntil(12)
	if e.Now() != 12 || len(r.got) != 2 {
		t.Fatalf("after RunUntil(12): Now=%v ran=%v", e.Now(), r.got)
	}
	e.RunUntil(7) // earlier: nothing, time does not go back
	if e.Now() != 12 {
		t.Fatalf("RunUntil into the past moved Now to %v", e.Now())
	}
	e.RunFor(100)
	if e.Now() != 112 || len(r.got) != 3 {
		t.Fatalf("after RunFor(100): Now=%v ran=%v", e.Now(), r.got)
	}
	// A cancelled timer at the top must not let a later event run early.
	tm := e.At(150, func() { t.Error("cancelled timer ran") })
	e.At(300, r.add("late"))
	tm.Stop()
	e.RunUntil(200)
	if len(r.got) != 3 || e.Now() != 200 {
		t.Fatalf("RunUntil(200) ran %v, Now=%v", r.got, e.Now())
	}
	if e.Step() != true || e.Now() != 300 || e.Step() {
		t.Fatalf("Step: Now=%v", e.Now())
	}
}

func TestStopFromEvent(t *testing.T) {
	for _, run := range []struct {
		name string
		f    func(e *Engine)
	}{
		{"Run", (*Engine).Run},
		{"RunUntil", func(e *Engine) { e.RunUntil(1000) }},
	} {
		t.Run(run.name, func(t *testing.T) {
			e := New(1)
			r := &recorder{e: e}
			e.At(1, r.add("a"))
			e.At(2, func() { r.got = append(r.got, "stop"); e.Stop() })
			e.At(2, r.add("b"))
			e.At(3, r.add("c"))
			run.f(e)
			if d := gocmp.Diff([]string{"a@1ps", "stop"}, r.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if e.Now() != 2 || e.Pending() != 2 {
				t.Errorf("Now=%v Pending=%d", e.Now(), e.Pending())
			}
			run.f(e) // resumes
			if d := gocmp.Diff([]string{"a@1ps", "stop", "b@2ps", "c@3ps"}, r.got); d != "" {
				t.Errorf("resume (-want +got):\n%s", d)
			}
		})
	}
}

func TestStepEmpty(t *testing.T) {
	e := New(1)
	if e.Step() {
		t.Error("Step on empty engine reported true")
	}
	e.AfterFunc(5, func() {}).Stop()
	if e.Step() || e.Now() != 0 || e.Executed() != 0 {
		t.Errorf("Step ran a cancelled timer: Now=%v Executed=%d", e.Now(), e.Executed())
	}
}

// countHandler counts Handle calls and records the argument.
type countHandler struct {
	e    *Engine
	args []int
}

func (h *countHandler) Handle(arg any) { h.args = append(h.args, *arg.(*int)) }

func TestScheduleHandler(t *testing.T) {
	e := New(1)
	h := &countHandler{e: e}
	vals := []int{0, 1, 2, 3}
	e.Schedule(10, h, &vals[2])
	e.ScheduleAfter(5, h, &vals[1])
	e.At(10, func() { h.args = append(h.args, 99) })
	e.Schedule(10, h, &vals[3])
	e.Schedule(-4, h, &vals[0]) // clamped to 0
	e.Run()
	if d := gocmp.Diff([]int{0, 1, 2, 99, 3}, h.args); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestHeapMatchesSort checks the heap order against a stable sort of 10k
// random events, with many ties and a share of them cancelled.
func TestHeapMatchesSort(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		e := New(seed)
		rng := e.Rand("test")
		type ev struct {
			at  clock.Time
			id  int
			off bool
		}
		var evs []ev
		var got []int
		timers := map[int]clock.Timer{}
		for i := range 10000 {
			at := clock.Time(rng.IntN(2000)) // plenty of equal times
			evs = append(evs, ev{at: at, id: i})
			timers[i] = e.At(at, func() { got = append(got, i) })
		}
		for i := range evs {
			if rng.IntN(5) == 0 {
				evs[i].off = true
				timers[i].Stop()
			}
		}
		// Events scheduled during the run, at and after the current time.
		e.At(1000, func() {
			for j := range 50 {
				id := 10000 + j
				at := 1000 + clock.Time(rng.IntN(20))
				evs = append(evs, ev{at: at, id: id})
				e.At(at, func() { got = append(got, id) })
			}
		})
		e.Run()
		slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
		var want []int
		for _, x := range evs {
			if !x.off {
				want = append(want, x.id)
			}
		}
		// Events added at 1000 with at==1000 run after everything already due
		// at 1000; the stable sort by time gives exactly that since their ids
		// were appended last.
		if d := gocmp.Diff(want, got); d != "" {
			t.Errorf("seed %d: heap order differs from sort (-want +got):\n%s", seed, d)
		}
	}
}

// TestNext: Next says when the next live event is due, skipping timers
// stopped at the top of the queue, and nothing when none is left.
func TestNext(t *testing.T) {
	e := New(1)
	if at, ok := e.Next(); ok {
		t.Errorf("empty engine: Next = %v, true", at)
	}
	first := e.AfterFunc(2*clock.Microsecond, func() {})
	e.AfterFunc(5*clock.Microsecond, func() {})
	if at, ok := e.Next(); !ok || at != clock.Time(2*clock.Microsecond) {
		t.Errorf("Next = %v, %v; want 2µs, true", at, ok)
	}
	first.Stop()
	if at, ok := e.Next(); !ok || at != clock.Time(5*clock.Microsecond) {
		t.Errorf("after stopping the first timer: Next = %v, %v; want 5µs, true", at, ok)
	}
	e.Run()
	if at, ok := e.Next(); ok {
		t.Errorf("after Run: Next = %v, true", at)
	}
}
