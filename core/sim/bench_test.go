package sim

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

func reportEvents(b *testing.B, e *Engine, before uint64) {
	b.ReportMetric(float64(e.Executed()-before)/b.Elapsed().Seconds(), "events/s")
}

// nop is a Handler that does nothing.
type nop struct{}

func (nop) Handle(any) {}

// BenchmarkScheduleRun schedules b.N events at random times, then runs them.
func BenchmarkScheduleRun(b *testing.B) {
	b.Run("closure", func(b *testing.B) {
		e := New(1)
		rng := e.Rand("bench")
		f := func() {}
		b.ReportAllocs()
		for range b.N {
			e.At(clock.Time(rng.Int64N(1<<40)), f)
		}
		e.Run()
		reportEvents(b, e, 0)
	})
	b.Run("handler", func(b *testing.B) {
		e := New(1)
		rng := e.Rand("bench")
		var h Handler = nop{}
		b.ReportAllocs()
		for range b.N {
			e.Schedule(clock.Time(rng.Int64N(1<<40)), h, nil)
		}
		e.Run()
		reportEvents(b, e, 0)
	})
}

// holder is the classic "hold" model: each event schedules one more at a
// random distance in the future, so the heap size stays constant.
type holder struct {
	e   *Engine
	rng interface{ Int64N(int64) int64 }
}

func (h *holder) Handle(any) {
	h.e.Schedule(h.e.now.Add(clock.Duration(1+h.rng.Int64N(1<<20))), h, nil)
}

func BenchmarkHold(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"10k", 10_000}, {"1M", 1_000_000}} {
		b.Run(size.name+"/handler", func(b *testing.B) {
			e := New(1)
			h := &holder{e: e, rng: e.Rand("hold")}
			for range size.n {
				e.Schedule(clock.Time(1+h.rng.Int64N(1<<20)), h, nil)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.Step()
			}
			reportEvents(b, e, 0)
		})
		b.Run(size.name+"/closure", func(b *testing.B) {
			e := New(1)
			rng := e.Rand("hold")
			var f func()
			f = func() { e.AfterFunc(clock.Duration(1+rng.Int64N(1<<20)), f) }
			for range size.n {
				e.AfterFunc(clock.Duration(1+rng.Int64N(1<<20)), f)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.Step()
			}
			reportEvents(b, e, 0)
		})
	}
}
