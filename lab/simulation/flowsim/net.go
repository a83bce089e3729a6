package flowsim

import (
	"math"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// Net is the flow-level network: link directions of fixed capacity and
// queue pairs whose messages cross them as rates. While a QP has a
// message queued each of its paths is a flow; every flow's rate is its
// max-min fair share (MaxMin), recomputed whenever a QP starts or stops
// sending (once per instant, however many do). A QP sends its messages one
// after the other at the sum of its paths' rates; a message lands at the
// peer its path's one-way latency after its last byte left, and its
// completion (the acknowledgement) reaches the sender the return latency
// later.
type Net struct {
	e       *sim.Engine
	caps    []float64 // bits per second, by link
	active  []*QP
	pending bool // a recompute is scheduled at the current instant
	fill    filler
	uses    [][]Use
	rates   []float64
	// Recomputes counts rate recomputations (for the report).
	Recomputes int64
}

// NewNet returns a network of links of capacities caps (bits per second)
// on engine e.
func NewNet(e *sim.Engine, caps []float64) *Net { return &Net{e: e, caps: caps} }

// Engine returns the engine the network runs on.
func (n *Net) Engine() *sim.Engine { return n.e }

// QP is one sender's stream of messages over one or more paths (a
// MetaRoCE QP sprays over several source ports: one path each).
type QP struct {
	n      *Net
	paths  [][]Use
	oneWay clock.Duration // last byte out → landed at the peer
	back   clock.Duration // landed → completion at the sender
	msgs   []msg
	head   int
	rates  []float64 // per path, bits per second
	rate   float64   // their sum
	at     clock.Time
	timer  clock.Timer
	active bool
	idx    int // in n.active
	// sent is the wire bytes the QP finished sending.
	sent float64
}

type msg struct {
	left   float64 // wire bytes not sent yet
	landed func()
	done   func()
}

// NewQP returns a QP whose paths cross the given links (one []Use per
// path), whose messages land oneWay after their last byte leaves and
// complete back later.
func (n *Net) NewQP(paths [][]Use, oneWay, back clock.Duration) *QP {
	return &QP{n: n, paths: paths, oneWay: oneWay, back: back, rates: make([]float64, len(paths))}
}

// Post queues a message of wire bytes on the wire (headers included);
// landed (if set) runs when it has arrived at the peer, done (if set)
// when its completion reaches the sender.
func (q *QP) Post(wire int, landed, done func()) {
	q.msgs = append(q.msgs, msg{left: float64(max(wire, 1)), landed: landed, done: done})
	if !q.active {
		q.active = true
		q.at = q.n.e.Now()
		q.idx = len(q.n.active)
		q.n.active = append(q.n.active, q)
		q.n.changed()
	}
}

// Rate returns the QP's current rate in bits per second.
func (q *QP) Rate() float64 { return q.rate }

// Sent returns the wire bytes the QP has put on the wire so far.
func (q *QP) Sent() float64 {
	q.advance(q.n.e.Now())
	return q.sent
}

// Backlog returns the messages posted and not yet sent.
func (q *QP) Backlog() int { return len(q.msgs) - q.head }

// changed schedules a recompute at the current instant.
func (n *Net) changed() {
	if !n.pending {
		n.pending = true
		n.e.AfterFunc(0, n.recompute)
	}
}

// advance accounts the QP's sending up to now at its current rate.
func (q *QP) advance(now clock.Time) {
	if now <= q.at {
		return
	}
	if q.head < len(q.msgs) && q.rate > 0 {
		b := q.rate / 8 * now.Sub(q.at).Seconds()
		m := &q.msgs[q.head]
		b = min(b, m.left)
		m.left -= b
		q.sent += b
	}
	q.at = now
}

// recompute gives every active QP's paths their max-min fair rates.
func (n *Net) recompute() {
	n.pending = false
	n.Recomputes++
	now := n.e.Now()
	n.uses = n.uses[:0]
	for _, q := range n.active {
		q.advance(now)
		n.uses = append(n.uses, q.paths...)
	}
	if cap(n.rates) < len(n.uses) {
		n.rates = make([]float64, len(n.uses))
	}
	n.rates = n.rates[:len(n.uses)]
	n.fill.fill(n.caps, n.uses, nil, n.rates)
	k := 0
	for _, q := range n.active {
		q.rate = 0
		for i := range q.paths {
			q.rates[i] = n.rates[k]
			q.rate += n.rates[k]
			k++
		}
		q.schedule()
	}
}

// schedule sets the QP's timer for the end of its head message.
func (q *QP) schedule() {
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	if q.head >= len(q.msgs) || q.rate <= 0 {
		return
	}
	left := q.msgs[q.head].left
	d := clock.Duration(math.Ceil(left * 8 / q.rate * float64(clock.Second)))
	q.timer = q.n.e.AfterFunc(d, q.sentHead)
}

// sentHead ends the head message: it lands and completes later; the next
// one goes on at the same rate, or the QP stops sending.
func (q *QP) sentHead() {
	q.timer = nil
	now := q.n.e.Now()
	q.advance(now)
	m := q.msgs[q.head]
	q.sent += m.left
	q.msgs[q.head] = msg{}
	q.head++
	if m.landed != nil || m.done != nil {
		if m.landed != nil {
			q.n.e.AfterFunc(q.oneWay, m.landed)
		}
		if m.done != nil {
			q.n.e.AfterFunc(q.oneWay+q.back, m.done)
		}
	}
	if q.head < len(q.msgs) {
		if q.head >= 64 && 2*q.head >= len(q.msgs) {
			q.msgs = q.msgs[:copy(q.msgs, q.msgs[q.head:])]
			q.head = 0
		}
		q.schedule()
		return
	}
	q.msgs, q.head = q.msgs[:0], 0
	q.active = false
	last := q.n.active[len(q.n.active)-1]
	q.n.active[q.idx] = last
	last.idx = q.idx
	q.n.active = q.n.active[:len(q.n.active)-1]
	q.rate = 0
	q.n.changed()
}
