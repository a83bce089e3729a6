package emu

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
)

// The live "behind" verdict. Each second of wall clock the Loop compares
// how late it read the frames that crossed from other processes in that
// second (their mean lateness, fabric time) and its worst batch lag with
// the tolerances below; a second past them makes the loop behind from
// then on, until a whole second is on time again. Nodes report it in
// /health and as emu_behind (1 or 0); rocelab inspect, stats and the live
// view show it. lab/scenarios/run judges a whole run with the same
// tolerances.
const (
	// BehindMeanLate is the mean lateness per frame past which a loop
	// is behind: half a 4 KiB frame's serialization at 100G.
	BehindMeanLate = clock.Duration(200 * clock.Nanosecond)
	// BehindMaxLag is the batch lag (fabric time) past which it is.
	BehindMaxLag = clock.Duration(50 * clock.Microsecond)
	behindWindow = time.Second
)

// behindTracker is the Loop's window state (loop goroutine only).
type behindTracker struct {
	start          time.Time
	frames, lateBy int64 // port totals at the window's start (lateBy in ps)
	maxLag         time.Duration
	since          time.Time // zero: on time
	meanLate, lag  clock.Duration
}

// noteLag records a batch's lag for the window.
func (b *behindTracker) noteLag(d time.Duration) { b.maxLag = max(b.maxLag, d) }

// checkBehind closes the window when a second has passed.
func (l *Loop) checkBehind(now time.Time) {
	b := &l.behind
	if b.start.IsZero() {
		b.start = now
		b.frames, b.lateBy = l.crossFrames()
		return
	}
	if now.Sub(b.start) < behindWindow {
		return
	}
	frames, lateBy := l.crossFrames()
	df, dl := frames-b.frames, lateBy-b.lateBy
	b.meanLate = 0
	if df > 0 {
		b.meanLate = clock.Duration(dl / df)
	}
	b.lag = l.toFabric(b.maxLag)
	// Without frames from other processes the loop's lateness touches
	// nothing: in-memory links deliver at their fabric time however late.
	late := df > 0 && (b.meanLate > BehindMeanLate || b.lag > BehindMaxLag)
	switch {
	case late && b.since.IsZero():
		b.since = b.start
	case !late:
		b.since = time.Time{}
	}
	b.start, b.frames, b.lateBy, b.maxLag = now, frames, lateBy, 0
}

// crossFrames sums, over the ports, the frames read from other processes
// and how late (ps, fabric time) they were read in all.
func (l *Loop) crossFrames() (frames, lateBy int64) {
	for _, p := range l.ports {
		frames += p.rxFrames - p.rxInLoop
		lateBy += int64(p.rxLateBy)
	}
	return frames, lateBy
}

// BehindState is a Loop's live verdict.
type BehindState struct {
	// Since is when the loop fell behind (zero: it is on time).
	Since time.Time
	// MeanLate is the last window's mean lateness per frame read from
	// other processes, MaxLag its worst batch lag (fabric time).
	MeanLate, MaxLag clock.Duration
}

// Behind returns the loop's live verdict. Call it on the loop goroutine.
func (l *Loop) Behind() BehindState {
	l.checkBehind(time.Now()) // an idle loop runs no turns to close its window
	b := &l.behind
	return BehindState{Since: b.since, MeanLate: b.meanLate, MaxLag: b.lag}
}
