// Package clock defines fabric time and line rates, and the small scheduler
// interface through which the pure models (switchmodel, endpoint) ask for
// future callbacks.
//
// Time is an integer count of picoseconds, as in htsim: at 400 Gb/s one byte
// takes 20 ps, so nanoseconds are too coarse for serialization. The models
// never read the wall clock; a driver hands them a Scheduler — the
// discrete-event simulator (core/sim) in virtual time, or the emulation's
// wall-clock loop slowed down by a scale factor k.
package clock

import (
	"fmt"
	"math"
	"math/bits"
)

// Time is a point in fabric time, in picoseconds since the start of a run.
type Time int64

// Duration is a span of fabric time in picoseconds.
type Duration int64

// Units of Duration.
const (
	Picosecond  Duration = 1
	Nanosecond           = 1000 * Picosecond
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
)

// Never is a Time later than any event a run schedules.
const Never Time = math.MaxInt64

// Add returns t+d.
func (t Time) Add(d Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Seconds returns t as floating-point seconds since the start of the run.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// String formats t like a Duration since the start of the run.
func (t Time) String() string { return Duration(t).String() }

// Seconds returns d as floating-point seconds.
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// Micros returns d as floating-point microseconds.
func (d Duration) Micros() float64 { return float64(d) / float64(Microsecond) }

// FromMicros converts floating-point microseconds to a Duration.
func FromMicros(us float64) Duration { return Duration(math.Round(us * float64(Microsecond))) }

// FromNanos converts nanoseconds to a Duration.
func FromNanos(ns int64) Duration { return Duration(ns) * Nanosecond }

// String formats d with the largest unit that keeps it readable: 1.5us, 20ps, 3ms.
func (d Duration) String() string {
	abs := d
	if abs < 0 {
		abs = -abs
	}
	switch {
	case abs == 0:
		return "0s"
	case abs < Nanosecond:
		return fmt.Sprintf("%dps", int64(d))
	case abs < Microsecond:
		return trimFloat(float64(d)/float64(Nanosecond)) + "ns"
	case abs < Millisecond:
		return trimFloat(float64(d)/float64(Microsecond)) + "us"
	case abs < Second:
		return trimFloat(float64(d)/float64(Millisecond)) + "ms"
	default:
		return trimFloat(float64(d)/float64(Second)) + "s"
	}
}

func trimFloat(f float64) string { return fmt.Sprintf("%.6g", f) }

// Rate is a line rate in bits per second.
type Rate int64

// Units of Rate.
const (
	BitPerSecond Rate = 1
	Kbps              = 1000 * BitPerSecond
	Mbps              = 1000 * Kbps
	Gbps              = 1000 * Mbps
)

// Serialize returns how long it takes to put n bytes on a link of rate r,
// rounded up to the next picosecond. A zero or negative rate means an
// infinitely fast link.
func (r Rate) Serialize(n int) Duration {
	if r <= 0 || n <= 0 {
		return 0
	}
	// bits × 1e12 / r in 128-bit arithmetic, rounded up: exact for any size.
	hi, lo := bits.Mul64(uint64(n)*8, uint64(Second))
	q, rem := bits.Div64(hi, lo, uint64(r))
	if rem != 0 {
		q++
	}
	return Duration(q)
}

// BytesIn returns how many whole bytes a link of rate r carries in d.
func (r Rate) BytesIn(d Duration) int64 {
	if r <= 0 || d <= 0 {
		return 0
	}
	return int64(float64(r) / 8 * d.Seconds())
}

// String formats r as 400G, 25G, 100M, 1.5G.
func (r Rate) String() string {
	switch {
	case r >= Gbps && r%Gbps == 0:
		return fmt.Sprintf("%dG", r/Gbps)
	case r >= Gbps:
		return trimFloat(float64(r)/float64(Gbps)) + "G"
	case r >= Mbps:
		return trimFloat(float64(r)/float64(Mbps)) + "M"
	case r >= Kbps:
		return trimFloat(float64(r)/float64(Kbps)) + "K"
	default:
		return fmt.Sprintf("%dbps", int64(r))
	}
}

// Timer is a pending callback that can be cancelled.
type Timer interface {
	// Stop cancels the callback; it reports whether the callback was still pending.
	Stop() bool
}

// Scheduler is what a model is handed to learn the time and ask for callbacks.
// Callbacks run on the model's one goroutine, never concurrently with each
// other or with the model's other entry points.
type Scheduler interface {
	Now() Time
	// AfterFunc runs f once, d after Now. d <= 0 runs it at Now, after the
	// callbacks already due at Now.
	AfterFunc(d Duration, f func()) Timer
}

// HandlerScheduler is the allocation-free scheduling path a Scheduler may
// also offer (the simulator's core/sim.Engine does): no closure, no Timer
// handle, h.Handle(arg) runs d after Now. Models use it for their hottest
// events (the end of each transmission) when their Scheduler has it, and
// AfterFunc otherwise.
type HandlerScheduler interface {
	ScheduleAfter(d Duration, h interface{ Handle(arg any) }, arg any)
}
