package jobs

import (
	"sync"
	"time"

	"github.com/rocelab/rocelab/core/clock"
)

// FabricClock is a live lab's fabric time on the wall clock: 0 at Start,
// Scale wall-clock seconds to the fabric second (as the node loops keep
// it). It is a clock.Scheduler whose callbacks run one at a time, each on
// a goroutine of its own, so that a fault faults.Schedule runs on a live
// lab as it does on the simulator's engine.
type FabricClock struct {
	Start time.Time
	Scale int
	mu    sync.Mutex // held while a callback runs
	done  bool       // Close ran: callbacks do nothing, under mu
}

var _ clock.Scheduler = (*FabricClock)(nil)

// Now is the fabric time elapsed since Start.
func (c *FabricClock) Now() clock.Time {
	return clock.Time(time.Since(c.Start).Nanoseconds() * int64(clock.Nanosecond) / int64(max(c.Scale, 1)))
}

// Wall is fabric duration d in wall-clock time.
func (c *FabricClock) Wall(d clock.Duration) time.Duration {
	return time.Duration(int64(d) / int64(clock.Nanosecond) * int64(max(c.Scale, 1)))
}

// AfterFunc runs f d of fabric time from now, never beside another
// callback of c.
func (c *FabricClock) AfterFunc(d clock.Duration, f func()) clock.Timer {
	return wallTimer{time.AfterFunc(max(c.Wall(d), 0), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.done {
			f()
		}
	})}
}

// Do runs f now as a callback would (never beside one): start a
// faults.Schedule on c in it.
func (c *FabricClock) Do(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// Close runs last (may be nil) as a callback would — after the callback
// running now, before any other — and from then on no callback runs:
// stop a faults.Run in it.
func (c *FabricClock) Close(last func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if last != nil && !c.done {
		last()
	}
	c.done = true
}

// wallTimer is a time.Timer as a clock.Timer.
type wallTimer struct{ t *time.Timer }

func (w wallTimer) Stop() bool { return w.t.Stop() }
