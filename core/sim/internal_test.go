package sim

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
)

// TestSeqRenumber runs across the point where insertion sequences are
// renumbered and checks ties still run in insertion order.
func TestSeqRenumber(t *testing.T) {
	e := New(1)
	e.seq = maxSeq - 3
	r := &recorder{e: e}
	for _, l := range []string{"a", "b", "c"} {
		e.At(10, r.add(l))
	}
	e.At(5, r.add("early"))
	e.AfterFunc(20, r.add("later")).Stop()
	for _, l := range []string{"d", "e", "f"} { // after the renumbering
		e.At(10, r.add(l))
	}
	if e.seq >= maxSeq-3 {
		t.Fatalf("seq = %d, not renumbered", e.seq)
	}
	e.Run()
	want := []string{"early@5ps", "a@10ps", "b@10ps", "c@10ps", "d@10ps", "e@10ps", "f@10ps"}
	if d := gocmp.Diff(want, r.got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestHotPathAllocs checks that Schedule and Step allocate
// nothing once the engine's tables have grown.
func TestHotPathAllocs(t *testing.T) {
	e := New(1)
	var h Handler = nop{}
	arg := new(int)
	for range 100 {
		e.Schedule(e.Now()+clock.Time(1), h, arg)
	}
	e.Run()
	if a := testing.AllocsPerRun(100, func() {
		e.ScheduleAfter(5, h, arg)
		e.Schedule(e.Now(), h, arg)
		e.Step()
		e.Step()
	}); a != 0 {
		t.Errorf("Schedule+Step: %v allocs, want 0", a)
	}
}

// TestBelowIsBefore: the branch-free comparison the heap's pop uses agrees
// with before on ties of time, of sequence, at the extremes of both, and
// on random keys.
func TestBelowIsBefore(t *testing.T) {
	keys := []key{
		{0, 0}, {0, 1}, {1, 0}, {1, ^uint64(0)}, {2, 0},
		{clock.Never, 0}, {clock.Never, ^uint64(0)}, {clock.Never - 1, ^uint64(0)},
	}
	rng := New(7).Rand("keys")
	for range 2000 {
		keys = append(keys, key{at: clock.Time(rng.Int64N(8)), ord: rng.Uint64() >> rng.IntN(64)})
	}
	for i := range keys {
		for j := range keys {
			a, b := &keys[i], &keys[j]
			if got, want := a.below(b) == 1, a.before(b); got != want {
				t.Fatalf("%+v below %+v = %v, before says %v", *a, *b, got, want)
			}
		}
	}
}

// TestReplaceTop: replacing the least key, as the window merge does with
// an engine's next entry, keeps the heap giving its keys in order, for
// heaps of one to twenty keys (a group has a handful to a few dozen
// engines) and keys that often tie on time.
func TestReplaceTop(t *testing.T) {
	rng := New(11).Rand("replace")
	for n := 1; n <= 20; n++ {
		h := newKeyHeap()
		var ord uint64
		next := func() key {
			ord++
			return key{at: clock.Time(rng.Int64N(16)), ord: ord}
		}
		for range n {
			h.push(next())
		}
		var last key
		for step := range 200 {
			top := h[root]
			if step > 0 && top.before(&last) {
				t.Fatalf("%d keys, step %d: %+v came after %+v", n, step, top, last)
			}
			last = top
			k := next()
			k.at += top.at // never before the key it replaces, as in the merge
			h.replaceTop(k)
			if h.len() != n {
				t.Fatalf("%d keys, step %d: %d in the heap", n, step, h.len())
			}
		}
		for h.len() > 0 {
			if k := h.pop(); k.before(&last) {
				t.Fatalf("%d keys: popped %+v after %+v", n, k, last)
			} else {
				last = k
			}
		}
	}
}
