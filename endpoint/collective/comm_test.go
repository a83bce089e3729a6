package collective

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
)

var allOps = []Op{AllReduce, AllGather, ReduceScatter, AllToAll}

// TestCorrect checks every element of every collective on n ∈ {2,3,4,8}
// for sizes that are tiny (fewer elements than ranks), uneven (not a
// multiple of n or of the slice) and multi-slice.
func TestCorrect(t *testing.T) {
	sizes := []int64{0, 4, 8, 12, 28, 32, 36, 100, 1000, 4100, 40004}
	for _, op := range allOps {
		for _, n := range []int{2, 3, 4, 8} {
			for _, sc := range []struct {
				slice, window int
				typ           DataType
			}{{64, 1, Float32}, {100, 3, Int32}, {4096, 8, Float32}} {
				name := fmt.Sprintf("%v/n=%d/slice=%d/win=%d/%v", op, n, sc.slice, sc.window, sc.typ)
				t.Run(name, func(t *testing.T) {
					h := newHarness(t, Config{Ranks: n, Type: sc.typ, SliceBytes: sc.slice, Window: sc.window, Check: true, Seed: 7},
						100*clock.Gbps, clock.Microsecond, nil)
					for _, size := range sizes {
						res, err := h.run(t, op, size, 1, 2)
						if err != nil {
							t.Fatalf("size %d: %v", size, err)
						}
						if !res.Checked || res.Wrong != 0 {
							t.Errorf("size %d: checked=%t wrong=%d, want checked and 0 wrong", size, res.Checked, res.Wrong)
						}
					}
				})
			}
		}
	}
}

// TestDuplicateDetected delivers one arrival twice: the run must fail
// and name it, whichever collective and whichever arrival (in order, or,
// for the all-to-all, in the senders' order).
func TestDuplicateDetected(t *testing.T) {
	eachTappedRun(t, func(p *tap, nth int) { p.dupNth = nth }, func(t *testing.T, nth int, _ Result, err error) {
		if err == nil || !strings.Contains(err.Error(), "duplicate arrival") {
			t.Errorf("arrival %d delivered twice: err = %v, want a duplicate arrival", nth, err)
		}
	})
}

// TestCorruptionDetected flips one byte of one arrival: the check must see
// it, whichever collective and whichever arrival.
func TestCorruptionDetected(t *testing.T) {
	eachTappedRun(t, func(p *tap, nth int) { p.flipNth = nth }, func(t *testing.T, nth int, res Result, err error) {
		if err != nil {
			t.Fatal(err)
		}
		if res.Wrong == 0 {
			t.Errorf("flipped a byte of arrival %d, #wrong = 0", nth)
		}
	})
}

// eachTappedRun runs every collective on 4 checked ranks through a tap
// that set arms for the nth arrival (1, 5 and 17), and hands each run's
// result to check.
func eachTappedRun(t *testing.T, set func(p *tap, nth int), check func(t *testing.T, nth int, res Result, err error)) {
	for _, op := range allOps {
		for _, nth := range []int{1, 5, 17} {
			t.Run(fmt.Sprintf("%v/arrival%d", op, nth), func(t *testing.T) {
				var p *tap
				h := newHarness(t, Config{Ranks: 4, SliceBytes: 256, Check: true}, 100*clock.Gbps, 0,
					func(tr Transport) Transport { p = newTap(tr, nil, 4); return p })
				p.sched = h.eng
				set(p, nth)
				res, err := h.run(t, op, 4096, 0, 1)
				check(t, nth, res, err)
			})
		}
	}
}

// TestBusBW: on the ideal transport with zero latency every NIC is busy
// from start to end, so busbw equals the NIC rate. Ring all-reduce: each
// rank sends 2(n-1) chunks of S/n, t = 2(n-1)/n × S/R, and busbw =
// S/t × 2(n-1)/n = R. All-gather, reduce-scatter and alltoall send (n-1)/n
// × S per rank: t = (n-1)/n × S/R and busbw = S/t × (n-1)/n = R. At 100
// Gb/s, R = 12.5 GB/s.
func TestBusBW(t *testing.T) {
	const rate = 100 * clock.Gbps
	want := float64(rate) / 8 / 1e9
	for _, op := range allOps {
		for _, n := range []int{2, 4, 8} {
			t.Run(fmt.Sprintf("%v/n=%d", op, n), func(t *testing.T) {
				h := newHarness(t, Config{Ranks: n}, rate, 0, nil) // payload-free, 512 KiB slices
				res, err := h.run(t, op, 64<<20, 1, 2)
				if err != nil {
					t.Fatal(err)
				}
				if res.BusBW > want*1.0001 || res.BusBW < want*0.98 {
					t.Errorf("busbw %.3f GB/s, want %.3f within 2%% (time %.1f us)", res.BusBW, want, res.TimeUs)
				}
				t.Logf("size %d time %.2f us algbw %.3f busbw %.3f GB/s", res.Size, res.TimeUs, res.AlgBW, res.BusBW)
				// The time itself is the bound: f × S / R.
				bound := BusFactor(op, n) * float64(res.Size) / want / 1e3
				if res.TimeUs < bound*0.9999 {
					t.Errorf("time %.2f us below the ideal %.2f us", res.TimeUs, bound)
				}
				if res.Checked {
					t.Error("payload-free run reports checked")
				}
			})
		}
	}
}

// TestPipelining: with per-message latency, cutting chunks into slices
// keeps every NIC busy across steps; whole-chunk writes wait a latency per
// step.
func TestPipelining(t *testing.T) {
	const rate, lat = 100 * clock.Gbps, 10 * clock.Microsecond
	time := func(slice int) float64 {
		h := newHarness(t, Config{Ranks: 4, SliceBytes: slice, Window: 8}, rate, lat, nil)
		res, err := h.run(t, AllReduce, 8<<20, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res.TimeUs
	}
	bound := 2 * 3 * float64(2<<20) * 8 / float64(rate) * 1e6 // 6 steps of a 2 MiB chunk: 1006.6 us
	whole, sliced := time(2<<20), time(128<<10)
	t.Logf("bound %.1f us, whole-chunk %.1f us, 128 KiB slices %.1f us", bound, whole, sliced)
	if !(sliced < whole) {
		t.Errorf("sliced %.1f us, whole-chunk %.1f us: want slicing faster", sliced, whole)
	}
	if sliced > bound*1.03 {
		t.Errorf("sliced %.1f us, want within 3%% of %.1f us", sliced, bound)
	}
	if whole < bound+6*10 {
		t.Errorf("whole-chunk %.1f us, want at least %.1f (one latency per step)", whole, bound+60)
	}
}

// TestWindow: no rank ever has more writes outstanding than the window, and
// all-to-all actually fills it.
func TestWindow(t *testing.T) {
	for _, w := range []int{1, 2, 5} {
		var p *tap
		h := newHarness(t, Config{Ranks: 4, SliceBytes: 1024, Window: w}, 100*clock.Gbps, clock.Microsecond,
			func(tr Transport) Transport { p = newTap(tr, nil, 4); return p })
		p.sched = h.eng
		if _, err := h.run(t, AllToAll, 1<<20, 0, 1); err != nil {
			t.Fatal(err)
		}
		for rank, m := range p.maxInflight {
			if m != w {
				t.Errorf("window %d: rank %d peaked at %d writes in flight", w, rank, m)
			}
		}
	}
}

// TestDeterminism: the same configuration gives the same arrivals at the
// same times and the same results.
func TestDeterminism(t *testing.T) {
	once := func() ([]arrival, []Result) {
		var p *tap
		h := newHarness(t, Config{Ranks: 3, SliceBytes: 300, Window: 2, Check: true, Seed: 42}, 25*clock.Gbps, 700*clock.Nanosecond,
			func(tr Transport) Transport { p = newTap(tr, nil, 3); return p })
		p.sched = h.eng
		var out []Result
		for _, op := range allOps {
			res, err := h.run(t, op, 10000, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
		return p.trace, out
	}
	tr1, res1 := once()
	tr2, res2 := once()
	if diff := cmp.Diff(tr1, tr2); diff != "" {
		t.Errorf("arrival traces differ (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(res1, res2); diff != "" {
		t.Errorf("results differ (-first +second):\n%s", diff)
	}
	if len(tr1) == 0 {
		t.Fatal("no arrivals traced")
	}
}

// TestIterations: warmup and measured iterations all run, and the average
// is over the measured ones (identical on the ideal transport).
func TestIterations(t *testing.T) {
	h := newHarness(t, Config{Ranks: 4, SliceBytes: 1024, Check: true}, 100*clock.Gbps, clock.Microsecond, nil)
	one, err := h.run(t, AllReduce, 1<<16, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	before := h.comm.iterations
	many, err := h.run(t, AllReduce, 1<<16, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.comm.iterations - before; got != 8 {
		t.Errorf("ran %d iterations, want 8", got)
	}
	if many.TimeUs != one.TimeUs {
		t.Errorf("average %.3f us over 5 iterations, single %.3f us: want equal on the ideal transport", many.TimeUs, one.TimeUs)
	}
	start := h.eng.Now()
	if _, err := h.run(t, AllReduce, 1<<16, 3, 5); err != nil {
		t.Fatal(err)
	}
	if got, want := h.eng.Now().Sub(start).Micros(), 8*one.TimeUs; got < want*0.999 {
		t.Errorf("8 iterations took %.1f us of virtual time, want >= %.1f", got, want)
	}
}

func TestErrors(t *testing.T) {
	t.Run("completion error", func(t *testing.T) {
		var p *tap
		h := newHarness(t, Config{Ranks: 4, SliceBytes: 1024, Check: true}, 100*clock.Gbps, 0,
			func(tr Transport) Transport { p = newTap(tr, nil, 4); return p })
		p.sched = h.eng
		p.failNth = 3
		_, err := h.run(t, AllReduce, 1<<16, 0, 1)
		if !errors.Is(err, errInjected) {
			t.Fatalf("err = %v, want the injected error", err)
		}
		// The communicator is usable again.
		p.failNth = 0
		if res, err := h.run(t, AllGather, 1<<16, 0, 1); err != nil || res.Wrong != 0 {
			t.Fatalf("after a failed run: %+v, %v", res, err)
		}
	})
	t.Run("busy", func(t *testing.T) {
		h := newHarness(t, Config{Ranks: 2}, 100*clock.Gbps, 0, nil)
		var errs []error
		h.comm.Run(AllReduce, 1<<20, 0, 1, func(_ Result, err error) { errs = append(errs, err) })
		h.comm.Run(AllReduce, 1<<20, 0, 1, func(_ Result, err error) { errs = append(errs, err) })
		h.eng.Run()
		if len(errs) != 2 || !errors.Is(errs[0], ErrBusy) || errs[1] != nil {
			t.Errorf("errors %v, want [ErrBusy, nil]", errs)
		}
	})
	t.Run("config", func(t *testing.T) {
		eng := sim.New(1)
		for _, cfg := range []Config{{Ranks: 1}, {Ranks: 2, SliceBytes: 3}, {Ranks: 2, Window: -1}, {Ranks: 2, Type: 9}} {
			if _, err := New(eng, NewIdeal(eng, 2, 0, 0), cfg); err == nil {
				t.Errorf("New(%+v) accepted", cfg)
			}
		}
	})
	t.Run("bad arrival", func(t *testing.T) {
		eng := sim.New(1)
		ideal := NewIdeal(eng, 3, clock.Gbps, clock.Microsecond)
		comm, _ := New(eng, ideal, Config{Ranks: 3, SliceBytes: 64})
		var got error
		comm.Run(AllReduce, 1<<12, 0, 1, func(_ Result, err error) { got = err })
		eng.RunUntil(0)
		// A write rank 0 would never send to rank 2 on the ring.
		if err := ideal.Write(Write{From: 0, To: 2, Len: 64, Imm: imm(0, 0)}, func(error) {}); err != nil {
			t.Fatal(err)
		}
		eng.Run()
		if got == nil {
			t.Error("an off-ring write was accepted")
		}
	})
}

func TestSweep(t *testing.T) {
	h := newHarness(t, Config{Ranks: 4, Check: true}, 100*clock.Gbps, 2*clock.Microsecond, nil)
	sizes, err := ParseSizes("1K:64K:x4")
	if err != nil {
		t.Fatal(err)
	}
	var got []Result
	h.comm.Sweep(ReduceScatter, sizes, 1, 1, func(rs []Result, e error) { got, err = rs, e })
	h.eng.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d results, want 4", len(got))
	}
	for i, r := range got {
		if r.Size != sizes[i] || r.Count != sizes[i]/4 || r.Wrong != 0 || r.RedOp != "sum" {
			t.Errorf("result %d: %+v", i, r)
		}
		if i > 0 && r.AlgBW <= got[i-1].AlgBW {
			t.Errorf("algbw not growing with size: %v then %v", got[i-1].AlgBW, r.AlgBW)
		}
	}
}

// TestBusBWCounters: the counters a dashboard divides give the Result's
// busbw: with no warm-up, Δcollective_bus_bytes_total /
// Δcollective_iteration_seconds_total = BusBW (GB/s) × 1e9.
func TestBusBWCounters(t *testing.T) {
	for _, op := range []Op{AllReduce, AllGather} {
		t.Run(op.String(), func(t *testing.T) {
			h := newHarness(t, Config{Ranks: 4}, 100*clock.Gbps, clock.Microsecond, nil)
			res, err := h.run(t, op, 1<<20, 0, 3)
			if err != nil {
				t.Fatal(err)
			}
			var bus, secs float64
			h.comm.Collect(func(s telemetry.Sample) {
				switch s.Name {
				case "collective_bus_bytes_total":
					bus = s.Value
				case "collective_iteration_seconds_total":
					secs = s.Value
				}
			})
			if want := 3 * float64(1<<20) * BusFactor(op, 4); bus != want {
				t.Errorf("bus bytes %g, want %g", bus, want)
			}
			if got, want := bus/secs, res.BusBW*1e9; math.Abs(got-want) > 1e-6*want {
				t.Errorf("busbw from counters %g B/s, Result %g B/s", got, want)
			}
		})
	}
}
