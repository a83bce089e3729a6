package pause

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// TestReceiver steps one receiver on a 100 Gb/s port, where a quantum is
// 5.12 ns: a PFC frame pauses the priorities it enables, a second one
// restarts the pause, an XON ends it, a PAUSE stops all eight.
func TestReceiver(t *testing.T) {
	e := sim.New(1)
	resumes := 0
	var r Receiver
	r.Init(e, 100*clock.Gbps, func() { resumes++ })
	pfc := func(classes uint8, quanta uint16) *wire.Packet {
		p := &wire.Packet{Kind: wire.KindPFC, ClassEnable: classes}
		for i := range 8 {
			p.Quanta[i] = quanta
		}
		return p
	}
	q := func(n uint16) clock.Duration { return wire.PauseTime(100*clock.Gbps, n) }
	steps := []struct {
		at      clock.Duration
		frame   *wire.Packet
		paused  [8]bool
		resumes int
		ended3  clock.Duration
	}{
		{0, pfc(1<<3, 1000), [8]bool{3: true}, 0, 0},
		{q(500), pfc(1<<3, 1000), [8]bool{3: true}, 0, 0}, // restarts: no resume at q(1000)
		{q(1200), nil, [8]bool{3: true}, 0, 0},
		{q(1500), nil, [8]bool{}, 1, q(1500)},
		{q(2000), pfc(1<<3|1<<4, 100), [8]bool{3: true, 4: true}, 1, q(1500)},
		{q(2050), pfc(1<<3, 0), [8]bool{4: true}, 2, q(1550)}, // XON
		{q(3000), &wire.Packet{Kind: wire.KindPause, Quanta: [8]uint16{10}}, [8]bool{true, true, true, true, true, true, true, true}, 3, q(1550)},
		{q(3010), nil, [8]bool{}, 11, q(1560)},
	}
	for i, s := range steps {
		e.RunUntil(clock.Time(s.at))
		if s.frame != nil {
			r.Receive(s.frame)
		}
		var paused [8]bool
		for p := range 8 {
			paused[p] = r.Paused(p)
		}
		if paused != s.paused || resumes != s.resumes || r.Ended[3] != s.ended3 {
			t.Errorf("step %d at %v: paused %v, %d resumes, ended %v; want %v, %d, %v",
				i, s.at, paused, resumes, r.Ended[3], s.paused, s.resumes, s.ended3)
		}
	}
	if want := [8]int64{1, 1, 1, 5, 2, 1, 1, 1}; r.Frames != want {
		t.Errorf("frames %v, want %v", r.Frames, want)
	}
	if got := r.PausedTime(3); got != q(1560) {
		t.Errorf("PausedTime(3) = %v, want %v", got, q(1560))
	}
}
