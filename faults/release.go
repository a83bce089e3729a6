package faults

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// timed is a packet held until at; seq orders packets due at the same time.
type timed struct {
	p   *wire.Packet
	at  clock.Time
	seq uint64
	t   clock.Timer
}

// releaseQueue holds packets in departure order (nondecreasing at) and
// hands each to out when its time comes, with one timer for the head: the
// FIFO behind the delay and rate stages.
type releaseQueue struct {
	sched clock.Scheduler
	out   func(*wire.Packet)
	fifo  []timed
	timer clock.Timer
	fire  func()
}

func newReleaseQueue(sched clock.Scheduler, out func(*wire.Packet)) releaseQueue {
	return releaseQueue{sched: sched, out: out}
}

// len returns how many packets wait.
func (q *releaseQueue) len() int { return len(q.fifo) }

// push queues it, whose at must not be before the last one queued, and
// arms the timer when it is the head.
func (q *releaseQueue) push(it timed, now clock.Time) {
	q.fifo = append(q.fifo, it)
	if len(q.fifo) == 1 {
		if q.fire == nil {
			q.fire = q.depart
		}
		q.timer = q.sched.AfterFunc(it.at.Sub(now), q.fire)
	}
}

// depart releases every packet that is due and re-arms for the next.
func (q *releaseQueue) depart() {
	now := q.sched.Now()
	for len(q.fifo) > 0 && q.fifo[0].at <= now {
		p := q.fifo[0].p
		q.fifo[0] = timed{}
		q.fifo = q.fifo[1:]
		q.out(p)
	}
	q.timer = nil
	if len(q.fifo) > 0 {
		q.timer = q.sched.AfterFunc(q.fifo[0].at.Sub(now), q.fire)
	} else {
		q.fifo = q.fifo[:0:0]
	}
}

// drain stops the timer and returns what waits, in order, leaving the
// queue empty; the caller passes the packets on.
func (q *releaseQueue) drain() []timed {
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	all := q.fifo
	q.fifo = nil
	return all
}
