package collective

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// barrier is an in-engine barrier of procs processes: it releases all of
// them when the last one arrives, and records the iterations it saw.
type barrier struct {
	procs    int
	waiting  []func()
	iters    []int
	releases int
}

func (b *barrier) arrive(iter int, release func()) {
	b.iters = append(b.iters, iter)
	b.waiting = append(b.waiting, release)
	if len(b.waiting) == b.procs {
		w := b.waiting
		b.waiting = nil
		b.releases++
		for _, f := range w {
			f()
		}
	}
}

// TestDistributed splits the ranks over two communicators sharing one
// ideal transport (two processes of one emulated cluster) and checks that
// the combined results equal the single communicator's, for every op.
func TestDistributed(t *testing.T) {
	const n = 6
	cfg := Config{Ranks: n, SliceBytes: 1000, Window: 3, Check: true, Seed: 5}
	splits := [][2][]int{
		{{0, 1, 2}, {3, 4, 5}},
		{{0, 2, 4}, {1, 3, 5}}, // every ring neighbour is remote
		{{5}, {0, 1, 2, 3, 4}},
	}
	for _, op := range allOps {
		for _, size := range []int64{0, 20, 4096, 100_000} {
			h := newHarness(t, cfg, 50*clock.Gbps, 700*clock.Nanosecond, nil)
			want, err := h.run(t, op, size, 1, 3)
			if err != nil {
				t.Fatal(err)
			}
			for k, split := range splits {
				t.Run(fmt.Sprintf("%v/%d/split%d", op, size, k), func(t *testing.T) {
					got := runSplit(t, cfg, split, op, size, nil)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("combined result differs from the single communicator's (-single +combined):\n%s", diff)
					}
				})
			}
		}
	}
}

// runSplit runs op on size bytes (one warm-up, three iterations) as two
// processes sharing one ideal transport, process p driving split[p] and
// using offload(eng, p) as its Config.Offload (nil: none), and returns
// their combined result. Both processes must finish, with one barrier
// release per iteration.
func runSplit(t *testing.T, cfg Config, split [2][]int, op Op, size int64, offload func(eng *sim.Engine, p int) func(work, then func())) Result {
	t.Helper()
	eng := sim.New(1)
	ideal := NewIdeal(eng, cfg.Ranks, 50*clock.Gbps, 700*clock.Nanosecond)
	b := &barrier{procs: 2}
	var res [2]Result
	called := 0
	for p := range 2 {
		c := cfg
		c.Local, c.Barrier = split[p], b.arrive
		if offload != nil {
			c.Offload = offload(eng, p)
		}
		comm, err := New(eng, ideal, c)
		if err != nil {
			t.Fatal(err)
		}
		comm.Run(op, size, 1, 3, func(r Result, err error) {
			if err != nil {
				t.Errorf("process %d: %v", p, err)
			}
			res[p] = r
			called++
		})
	}
	eng.Run()
	if called != 2 {
		t.Fatalf("%d of 2 processes finished", called)
	}
	if b.releases != 4 {
		t.Errorf("%d barrier releases, want 4 (one per iteration)", b.releases)
	}
	got, err := Combine(res[:])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestOffload runs the distributed case with Config.Offload deferring the
// data work (fill before an iteration, check after it) by some fabric
// time, as an emulated host's goroutine does in wall time. With the same
// delay in both processes the results equal the inline run's exactly
// (iteration times exclude the work); with different delays one process
// starts later, the other's writes arrive while it is still filling and
// must be held, and every element must still check out.
func TestOffload(t *testing.T) {
	const n = 6
	cfg := Config{Ranks: n, SliceBytes: 1000, Window: 3, Check: true, Seed: 5}
	split := [2][]int{{0, 2, 4}, {1, 3, 5}}
	for _, op := range allOps {
		h := newHarness(t, cfg, 50*clock.Gbps, 700*clock.Nanosecond, nil)
		want, err := h.run(t, op, 100_000, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, delays := range [][2]clock.Duration{{3 * clock.Microsecond, 3 * clock.Microsecond}, {0, 20 * clock.Microsecond}, {20 * clock.Microsecond, 1}} {
			t.Run(fmt.Sprintf("%v/%v-%v", op, delays[0], delays[1]), func(t *testing.T) {
				offloads := 0
				got := runSplit(t, cfg, split, op, 100_000, func(eng *sim.Engine, p int) func(work, then func()) {
					return func(work, then func()) {
						offloads++
						eng.AfterFunc(delays[p], func() { work(); then() })
					}
				})
				if offloads != 2*2*4 { // two processes, fill and check, four iterations
					t.Errorf("%d offloads, want 16", offloads)
				}
				if got.Wrong != 0 || got.Iters != want.Iters {
					t.Errorf("got %+v, want no wrong elements and %d iterations", got, want.Iters)
				}
				if delays[0] == delays[1] {
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("result differs from the inline run's (-inline +offloaded):\n%s", diff)
					}
				}
			})
		}
	}
}

// TestDistributedCorruption: a byte flipped on a remote arrival is counted
// by the process that owns the target rank.
func TestDistributedCorruption(t *testing.T) {
	eng := sim.New(1)
	ideal := NewIdeal(eng, 4, 100*clock.Gbps, 0)
	p := newTap(ideal, eng, 4)
	p.flipNth = 3
	b := &barrier{procs: 2}
	var res [2]Result
	for i, local := range [][]int{{0, 1}, {2, 3}} {
		comm, err := New(eng, p, Config{Ranks: 4, SliceBytes: 256, Check: true, Local: local, Barrier: b.arrive})
		if err != nil {
			t.Fatal(err)
		}
		comm.Run(AllReduce, 4096, 0, 1, func(r Result, err error) {
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		})
	}
	eng.Run()
	got, err := Combine(res[:])
	if err != nil {
		t.Fatal(err)
	}
	if got.Wrong == 0 {
		t.Errorf("flipped byte not detected: %+v", res)
	}
}

func TestDistributedConfigErrors(t *testing.T) {
	eng := sim.New(1)
	ideal := NewIdeal(eng, 4, 0, 0)
	for _, c := range []Config{
		{Ranks: 4, Local: []int{0, 1}},                               // no barrier
		{Ranks: 4, Local: []int{}},                                   // empty
		{Ranks: 4, Local: []int{4}, Barrier: (&barrier{}).arrive},    // out of range
		{Ranks: 4, Local: []int{1, 1}, Barrier: (&barrier{}).arrive}, // twice
	} {
		if _, err := New(eng, ideal, c); err == nil {
			t.Errorf("New(%+v) succeeded", c.Local)
		}
	}
}
