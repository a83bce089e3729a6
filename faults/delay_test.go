package faults

import (
	"fmt"
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// TestDelayDistributions: 20,000 packets 1 ms apart (far more than any
// delay, so FIFO ordering never holds one back) through delay 10us
// jitter 2us with each distribution. The mean added delay must be 10 µs
// within 4σ/√N of the sample, and the standard deviation 2/√3 µs
// (uniform), 2 µs (normal) within 3 %, 2 µs (Pareto α = 5, finite fourth
// moment) within 10 %; for Pareto α = 3 (the default) only the mean is
// checked: its sample variance converges too slowly to test.
func TestDelayDistributions(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		spec   string
		sd     float64 // µs
		sdTol  float64
		seeded uint64
	}{
		{"delay 10us jitter 2us dist uniform", 2 / math.Sqrt(3), 0.03, 1},
		{"delay 10us jitter 2us dist normal", 2, 0.03, 2},
		{"delay 10us jitter 2us dist pareto alpha 5", 2, 0.10, 3},
		{"delay 10us jitter 2us dist pareto", 2, -1, 4},
	} {
		t.Run(c.spec, func(t *testing.T) {
			e := sim.New(c.seeded)
			rec := &recorder{sched: e}
			ch, f := chained(t, e, c.spec, rec)
			sendEvery(e, 0, clock.Millisecond, n, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
			e.Run()
			if len(rec.got) != n {
				t.Fatalf("got %d packets", len(rec.got))
			}
			var ds []float64
			for _, a := range rec.got {
				sent := clock.Time(int64(a.psn) * int64(clock.Millisecond))
				ds = append(ds, a.at.Sub(sent).Micros())
			}
			mean, sd := meanSD(ds)
			if math.Abs(mean-10) > 4*c.sd/math.Sqrt(n) {
				t.Errorf("mean %.4f µs, want 10 ± %.4f", mean, 4*c.sd/math.Sqrt(n))
			}
			if c.sdTol > 0 && math.Abs(sd-c.sd)/c.sd > c.sdTol {
				t.Errorf("stddev %.4f µs, want %.4f ± %.0f%%", sd, c.sd, c.sdTol*100)
			}
			if counters(f).Delayed != n {
				t.Errorf("delayed counter %d", counters(f).Delayed)
			}
			t.Logf("%s: mean %.4f µs, stddev %.4f µs (want %.4f)", c.spec, mean, sd, c.sd)
		})
	}
}

// TestDelayFIFO: packets 100 ns apart with 10 ± 5 µs uniform jitter would
// reorder if each took its own delay; the stage keeps them in order.
func TestDelayFIFO(t *testing.T) {
	e := sim.New(1)
	rec := &recorder{sched: e}
	ch, _ := chained(t, e, "delay 10us jitter 5us", rec)
	sendEvery(e, 0, 100*clock.Nanosecond, 20000, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
	e.Run()
	for i, a := range rec.got {
		if a.psn != uint32(i) {
			t.Fatalf("packet %d arrived in position %d", a.psn, i)
		}
	}
	if len(rec.got) != 20000 {
		t.Fatalf("got %d", len(rec.got))
	}
}

// TestReorder: reorder 5 % hold 10us on packets 100 ns apart: each held
// packet is overtaken by ~100 later ones. The fraction arriving after a
// higher sequence number must be 5 % within the binomial 3σ (N = 20,000,
// σ ≈ 30.8 packets).
func TestReorder(t *testing.T) {
	for _, spec := range []string{"reorder 5% hold 10us", "delay 2us reorder 5% hold 10us"} {
		t.Run(spec, func(t *testing.T) {
			const n, p = 20000, 0.05
			e := sim.New(5)
			rec := &recorder{sched: e}
			ch, f := chained(t, e, spec, rec)
			sendEvery(e, 0, 100*clock.Nanosecond, n, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
			e.Run()
			var late int
			var maxSeen int64 = -1
			for _, a := range rec.got {
				if int64(a.psn) < maxSeen {
					late++
				}
				maxSeen = max(maxSeen, int64(a.psn))
			}
			sigma := math.Sqrt(n * p * (1 - p))
			if len(rec.got) != n || math.Abs(float64(late)-n*p) > 3*sigma || int64(late) != counters(f).Reordered {
				t.Errorf("%d of %d arrived out of order (want %v ± %.0f), counter %d", late, len(rec.got), n*p, 3*sigma, counters(f).Reordered)
			}
			t.Logf("%s: %d/%d out of order (%.2f%%)", spec, late, n, 100*float64(late)/n)
		})
	}
}

// TestDuplicate: duplicate 10 % over N = 100,000: the receiver sees a
// PSN twice Np = 10,000 times within 3σ (σ ≈ 94.9), and each copy
// follows its original.
func TestDuplicate(t *testing.T) {
	const n, p = 100000, 0.1
	var rec recorder
	d := NewDuplicate(Duplication{P: p}, rng(11))
	d.SetNext(&rec)
	for i := range n {
		d.Receive(roce(uint32(i)))
	}
	seen := map[uint32]int{}
	for i, a := range rec.got {
		seen[a.psn]++
		if seen[a.psn] == 2 && (i == 0 || rec.got[i-1].psn != a.psn || rec.pkts[i] == rec.pkts[i-1]) {
			t.Fatalf("copy of %d does not follow its original as a distinct packet", a.psn)
		}
	}
	dups := len(rec.got) - n
	sigma := math.Sqrt(n * p * (1 - p))
	if math.Abs(float64(dups)-n*p) > 3*sigma || int64(dups) != d.Stats().Duplicated || len(seen) != n {
		t.Errorf("%d duplicates, want %v ± %.0f (counter %d)", dups, n*p, 3*sigma, d.Stats().Duplicated)
	}
	t.Logf("duplicates %d of %d", dups, n)
}

// TestRateDegradation: a 400G sender pushes 20,000 back-to-back 1000-byte
// frames (1024 wire bytes, 20.48 ns each at 400G) into "rate 100G queue
// 64MiB": they leave exactly one per 81.92 ns, 100G within 1 %. With the
// default 1 MiB queue the excess is dropped and counted and the queue
// never exceeds its bound.
func TestRateDegradation(t *testing.T) {
	for _, c := range []struct {
		spec  string
		drops bool
	}{{"rate 100G queue 64MiB", false}, {"rate 100G", true}} {
		t.Run(c.spec, func(t *testing.T) {
			const n = 20000
			e := sim.New(1)
			rec := &recorder{sched: e}
			ch, f := chained(t, e, c.spec, rec)
			gap := (400 * clock.Gbps).Serialize(1024)
			sendEvery(e, clock.Time(gap), gap, n, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
			e.Run()
			got := rec.got
			elapsed := got[len(got)-1].at.Sub(got[0].at)
			rate := float64(len(got)-1) * 1024 * 8 / elapsed.Seconds()
			if math.Abs(rate-100e9)/100e9 > 0.01 {
				t.Errorf("throughput %.3f Gb/s, want 100 ± 1%%", rate/1e9)
			}
			st := counters(f)
			sh := f.(*Shaper)
			if st.Dropped+int64(len(got)) != n || (st.Dropped > 0) != c.drops || sh.peak > sh.m.Queue {
				t.Errorf("delivered %d + dropped %d of %d; peak queue %d of %d", len(got), st.Dropped, n, sh.peak, sh.m.Queue)
			}
			t.Logf("%s: %.4f Gb/s over %s, %d dropped, peak queue %d B", c.spec, rate/1e9, elapsed, st.Dropped, sh.peak)
		})
	}
}

// TestFlap: packets every 10 µs for 1 s into "flap period 100ms down 20ms
// offset 5ms", added at 3 ms: exactly the packets sent in [8 ms + k·100 ms,
// 28 ms + k·100 ms) are dropped, as computed from the schedule.
func TestFlap(t *testing.T) {
	e := sim.New(1)
	rec := &recorder{sched: e}
	ch := NewChain(rec)
	const n = 100000
	gap := 10 * clock.Microsecond
	sendEvery(e, 0, gap, n, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
	var f Fault
	e.At(clock.Time(3*clock.Millisecond), func() {
		s, _ := ParseSpec("flap period 100ms down 20ms offset 5ms")
		f, _ = s.New(Env{Sched: e})
		ch.Add(f)
	})
	e.Run()
	var want int64
	start := clock.Time(8 * clock.Millisecond)
	for i := range n {
		at := clock.Time(int64(i) * int64(gap))
		if at >= start && at.Sub(start)%(100*clock.Millisecond) < 20*clock.Millisecond {
			want++
		}
	}
	st := counters(f)
	if st.Dropped != want || int64(len(rec.got)) != n-want {
		t.Errorf("dropped %d, want %d; delivered %d", st.Dropped, want, len(rec.got))
	}
	t.Logf("flap: %d of %d dropped (10 windows × 2000)", st.Dropped, n)
}

// TestDownUp: "down" drops everything until removed.
func TestDownUp(t *testing.T) {
	e := sim.New(1)
	rec := &recorder{sched: e}
	ch := NewChain(rec)
	sendEvery(e, 0, clock.Microsecond, 100, ch, func(i int) *wire.Packet { return roce(uint32(i)) })
	var id ID
	e.At(clock.Time(20*clock.Microsecond), func() {
		s, _ := ParseSpec("down")
		f, _ := s.New(Env{Sched: e})
		id, _ = ch.Add(f)
	})
	e.At(clock.Time(50*clock.Microsecond), func() { ch.Remove(id) })
	e.Run()
	// Packets due at the same time as the add or the remove were
	// scheduled first, so 20 passes and 50 is dropped.
	if len(rec.got) != 70 || rec.got[20].psn != 20 || rec.got[21].psn != 51 {
		t.Errorf("got %d packets, want 70 (0–20 and 51–99): %v", len(rec.got), fmt.Sprint(rec.got[19:23]))
	}
}
