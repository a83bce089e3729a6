package web

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestReplayFeedSpeed: each frame of a replay covers speed × interval of
// fabric time, whatever the recording's step; pauses and the deepest
// queue of the frames it passes over stay visible.
func TestReplayFeedSpeed(t *testing.T) {
	const step, n = 1e-8, 400
	rec := &Recording{Step: step}
	for i := range n {
		f := Frame{FabricTime: float64(i) * step, Queues: map[string]int{"sw:p1": 0},
			Links: []LinkState{{A: "h", B: "sw", UtilAB: 1}}}
		if i == 5 {
			f.Queues["sw:p1"] = 9000
			f.Links[0].PFCAB = true
		}
		rec.Frames = append(rec.Frames, f)
	}
	for _, c := range []struct {
		name  string
		speed float64 // fabric s per wall s; 0: the default
		want  float64 // fabric seconds between frames
	}{
		{"default", 0, DefaultReplaySpeed * 1e-3},
		{"10x", 10 * DefaultReplaySpeed, 10 * DefaultReplaySpeed * 1e-3},
		{"slower than the step", 0.05 * DefaultReplaySpeed, step}, // one frame per 2 ms
		{"nonsense keeps the default", math.NaN(), DefaultReplaySpeed * 1e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := rec.NewFeed(time.Millisecond).(*replayFeed)
			f.setSpeed(c.speed)
			ctx := context.Background()
			first, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			second, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := second.FabricTime - first.FabricTime; math.Abs(got-c.want) > step/2 {
				t.Errorf("frames %g s apart, want %g", got, c.want)
			}
			if second.FabricTime >= 5*step && (second.Queues["sw:p1"] != 9000 || !second.Links[0].PFCAB) {
				t.Errorf("a frame over frame 5 lost its queue or pause: %+v", second)
			}
			if u := second.Links[0].UtilAB; math.Abs(u-1) > 1e-9 {
				t.Errorf("utilisation %g, want 1", u)
			}
		})
	}
}
