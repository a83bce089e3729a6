// Package pause is the receive side of 802.1Qbb PFC and 802.3x PAUSE for a
// transmitter that obeys pauses per priority: which of its eight priorities
// a received frame stops, until when, and for how long in total. Like
// wire/pipe it is a small state machine on a clock.Scheduler; the NIC model
// and the switch test bench's host obey pauses through it. (A switch port
// does more on a pause — storms, a watchdog — and keeps its own.)
package pause

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// Receiver tracks the pauses of eight priorities. Each frame restarts the
// pause of every priority it names for quanta × 512 bit times at the
// port's rate (wire.PauseTime); zero quanta (XON) ends it at once. Call
// Init before use.
type Receiver struct {
	sched  clock.Scheduler
	rate   clock.Rate
	resume func()

	paused [8]bool
	until  [8]clock.Time
	since  [8]clock.Time
	timer  [8]clock.Timer

	// Frames counts the frames received for each priority: a PFC frame
	// counts for every priority it enables, a PAUSE for all eight.
	Frames [8]int64
	// Ended is the time each priority was paused, pauses that ended.
	Ended [8]clock.Duration
}

// Init sets the scheduler, the port's line rate, and resume, called when
// a paused priority may send again.
func (r *Receiver) Init(sched clock.Scheduler, rate clock.Rate, resume func()) {
	r.sched, r.rate, r.resume = sched, rate, resume
}

// Receive applies p if it is a PFC or PAUSE frame and ignores it otherwise.
func (r *Receiver) Receive(p *wire.Packet) {
	switch p.Kind {
	case wire.KindPFC:
		for i := range 8 {
			if p.ClassEnable&(1<<uint(i)) != 0 {
				r.pause(i, p.Quanta[i])
			}
		}
	case wire.KindPause:
		for i := range 8 {
			r.pause(i, p.Quanta[0])
		}
	}
}

// Paused reports whether priority prio is paused now.
func (r *Receiver) Paused(prio int) bool { return r.paused[prio&7] }

// PausedTime returns how long priority prio has been paused in total, the
// pause under way included.
func (r *Receiver) PausedTime(prio int) clock.Duration {
	d := r.Ended[prio&7]
	if r.paused[prio&7] {
		d += r.sched.Now().Sub(r.since[prio&7])
	}
	return d
}

func (r *Receiver) pause(i int, quanta uint16) {
	r.Frames[i]++
	now := r.sched.Now()
	if r.timer[i] != nil {
		r.timer[i].Stop()
		r.timer[i] = nil
	}
	if quanta == 0 {
		r.end(i)
		return
	}
	if !r.paused[i] {
		r.paused[i] = true
		r.since[i] = now
	}
	d := wire.PauseTime(r.rate, quanta)
	r.until[i] = now.Add(d)
	r.timer[i] = r.sched.AfterFunc(d, func() {
		if r.paused[i] && r.sched.Now() >= r.until[i] {
			r.timer[i] = nil
			r.end(i)
		}
	})
}

func (r *Receiver) end(i int) {
	if !r.paused[i] {
		return
	}
	r.paused[i] = false
	r.Ended[i] += r.sched.Now().Sub(r.since[i])
	r.resume()
}
