package emu_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// TestRunAhead: a loop with a lead runs the events due within it in one
// turn: a burst that leaves a port back to back is written in fewer
// batches than without a lead, no frame is written after its exact time
// nor more than the lead before it, and each frame's trailer says how
// early it was written, so that the neighbour still delivers it from the
// time the model sent it.
func TestRunAhead(t *testing.T) {
	const burst = 12
	lead := hop / 4
	wall := func(d clock.Duration) time.Duration { return time.Duration(int64(d) * scale / int64(clock.Nanosecond)) }
	run := func(t *testing.T, lead clock.Duration) (batches float64) {
		synctest.Test(t, func(t *testing.T) {
			r := newRigLead(t, switchmodel.DefaultConfig(), true, lead, 100*clock.Gbps, 100*clock.Gbps)
			stop := r.run(t)
			defer stop()
			start := time.Now()
			time.Sleep(time.Millisecond)
			stamp := time.Now()
			var in []byte
			for i := range burst {
				in = frame(t, 0, 1, 26, 1024, uint32(i))
				r.ports[0].InjectAt(stamp, withTrailer(in, 0))
			}
			time.Sleep(20 * time.Millisecond)
			synctest.Wait()
			got := r.ports[1].Written()
			if len(got) != burst {
				t.Fatalf("port 1 wrote %d frames, want %d", len(got), burst)
			}
			ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(in)))
			for i, w := range got {
				// The exact time: a link delay after the burst
				// arrived, then back-to-back serializations.
				exact := start.Add(wall(fabricOf(start, stamp).Add(hop + clock.Duration(i+1)*ser).Sub(0)))
				if w.At.After(exact.Add(2 * time.Nanosecond)) {
					t.Errorf("frame %d written %v after its time", i, w.At.Sub(exact))
				}
				if early := exact.Sub(w.At); early > wall(max(lead, 0))+2*time.Nanosecond {
					t.Errorf("frame %d written %v early, more than the lead %v", i, early, wall(lead))
				}
				_, late := trailerOf(t, w.Frame)
				near(t, "frame "+string(rune('a'+i))+" written less its trailer's lateness", w.At.Add(-wall(late)), exact)
			}
			_, s, err := r.loop.Gather(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			batches = telemetry.Sum(s, "emu_tx_batches_total", telemetry.Label{Name: "port", Value: "1"})
		})
		return batches
	}
	var exact, ahead float64
	t.Run("no lead", func(t *testing.T) { exact = run(t, -1) })
	t.Run("lead", func(t *testing.T) { ahead = run(t, lead) })
	if exact != burst {
		t.Errorf("without a lead: %v write batches, want one per frame (%d)", exact, burst)
	}
	// 12 serializations of 1,084 bytes at 100G span ~1.1 µs: a quarter-µs
	// lead gathers them in about five turns.
	if ahead > burst/2 {
		t.Errorf("with a lead of %v: %v write batches for %d frames, want at most %d", lead, ahead, burst, burst/2)
	}
}

// TestStoppedTimerDoesNotWake: the loop sleeps until the engine's next
// live event, so a timer stopped before it falls due wakes nobody (an
// endpoint stops most of its retransmission timers).
func TestStoppedTimerDoesNotWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), 100*clock.Gbps)
		stop := r.run(t)
		fired := 0
		r.loop.Do(t.Context(), func() {
			r.loop.AfterFunc(clock.Microsecond, func() { fired++ }).Stop()
			r.loop.AfterFunc(3*clock.Microsecond, func() { fired++ })
		})
		time.Sleep(10 * time.Millisecond) // fabric 10 µs
		synctest.Wait()
		stop()
		if fired != 1 {
			t.Errorf("%d timers fired, want 1", fired)
		}
		if got := counter(r.loop, "emu_wakeups_total", telemetry.Label{Name: "cause", Value: "timer"}); got != 1 {
			t.Errorf("%v wake-ups for timers, want 1 (the stopped one woke the loop?)", got)
		}
	})
}
