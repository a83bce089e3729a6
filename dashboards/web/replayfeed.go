package web

import (
	"context"
	"math"
	"time"
)

// DefaultReplaySpeed is the fabric seconds a replay plays per wall second
// unless the page asks for another: 100 µs a second, so that a 1 ms run
// replays in about 10 s.
const DefaultReplaySpeed = 100e-6

// Replay speeds the page may ask for are clamped to this range (fabric
// seconds per wall second).
const (
	MinReplaySpeed = 1e-7
	MaxReplaySpeed = 1
)

// Info returns the slider's description of the recording.
func (r *Recording) Info() *ReplayInfo {
	return &ReplayInfo{Frames: len(r.Frames), Length: float64(len(r.Frames)) * r.Step, Speed: DefaultReplaySpeed}
}

// NewFeed returns a feed that sends one frame per interval of wall clock
// (0: 250 ms), each covering the fabric time the replay speed plays in
// that interval (DefaultReplaySpeed until the page asks for another).
func (r *Recording) NewFeed(interval time.Duration) Feed {
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	return &replayFeed{rec: r, interval: interval, speed: DefaultReplaySpeed}
}

type replayFeed struct {
	rec      *Recording
	interval time.Duration
	speed    float64 // fabric seconds per wall second
	i        int     // the next recorded frame to send
	pos      float64 // the play position, in recorded frames (i ≤ pos + 1)
	started  bool
}

func (f *replayFeed) seekTo(t float64) {
	f.i = min(max(int(t/f.rec.Step), 0), len(f.rec.Frames)-1)
	f.pos = float64(f.i)
}

// setSpeed sets the fabric seconds played per wall second; a speed that is
// not a positive number leaves it as it was.
func (f *replayFeed) setSpeed(s float64) {
	if s > 0 && !math.IsInf(s, 0) {
		f.speed = min(max(s, MinReplaySpeed), MaxReplaySpeed)
	}
}

// Next waits one interval (none before the first frame), advances the
// play position by speed × interval and returns the recorded frames it
// passed, merged into one (merge); when the position has not reached a
// new frame yet it waits another interval.
func (f *replayFeed) Next(ctx context.Context) (Frame, error) {
	n := len(f.rec.Frames)
	for {
		if f.i >= n {
			return Frame{}, errEnd
		}
		if !f.started {
			f.started = true
			fr := f.rec.Frames[f.i]
			f.i++
			fr.Wall = time.Now()
			return fr, nil
		}
		select {
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		case <-time.After(f.interval):
		}
		f.pos += f.speed * f.interval.Seconds() / f.rec.Step
		end := min(int(f.pos)+1, n)
		if end <= f.i {
			continue
		}
		fr := merge(f.rec.Frames[f.i:end])
		f.i = end
		fr.Wall = time.Now()
		return fr, nil
	}
}
