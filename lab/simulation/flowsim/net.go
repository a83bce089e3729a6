package flowsim

import (
	"math"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// Net is the flow-level network: link directions of fixed capacity and
// queue pairs whose messages cross them as rates. While a QP has a
// message queued each of its paths is a flow; every flow's rate is its
// max-min fair share (MaxMin), brought up to date whenever QPs start or
// stop sending — once per instant, however many do, and only where the
// change can reach (solver). A QP sends its messages one after the other
// at the sum of its paths' rates; a message lands at the peer its path's
// one-way latency after its last byte left, and its completion (the
// acknowledgement) reaches the sender the return latency later.
//
// Messages that end within TieTolerance of one another end together, at
// the first of them: their end times differ by float noise (rates are
// levels of a progressive filling, ends are rounded up to the picosecond),
// and one rate update serves them all.
type Net struct {
	e       *sim.Engine
	caps    []float64 // bits per second, by link
	solver  *solver
	pending bool // a recompute is scheduled at the current instant
	// Ends of the QPs' head messages: one engine timer for the earliest.
	ends    endHeap
	timer   clock.Timer
	timerAt clock.Time
	seq     uint64
	// affected is the recompute's scratch: QPs whose rates changed.
	affected []*QP
	mark     uint64
	// Recomputes counts rate recomputations (for the report).
	Recomputes int64
}

// TieTolerance returns how close to fabric time t two message ends must
// be to count as one instant: 1 ps, or 1e-9 of t when that is more (1 ns
// at 1 s). Float noise in a message's end is about 1e-15 of its duration,
// far below; an end moved earlier by the tolerance changes a completion
// time by at most a billionth of the time it is measured at.
func TieTolerance(t clock.Time) clock.Duration {
	return max(clock.Duration(1), clock.Duration(float64(t)*1e-9))
}

// maxEnd bounds how far ahead a message's end is set (picoseconds, about
// 53 days of fabric time): a message that would take longer (a link of a
// few bits per second) ends then instead of overflowing the clock.
const maxEnd = 1 << 62

// NewNet returns a network of links of capacities caps (bits per second)
// on engine e.
func NewNet(e *sim.Engine, caps []float64) *Net {
	return &Net{e: e, caps: caps, solver: newSolver(caps)}
}

// Engine returns the engine the network runs on.
func (n *Net) Engine() *sim.Engine { return n.e }

// QP is one sender's stream of messages over one or more paths (a
// MetaRoCE QP sprays over several source ports: one path each).
type QP struct {
	n      *Net
	paths  [][]Use
	flows  []int32        // the solver's flow of each path while active
	oneWay clock.Duration // last byte out → landed at the peer
	back   clock.Duration // landed → completion at the sender
	msgs   []msg
	head   int
	rates  []float64 // per path, bits per second
	rate   float64   // their sum
	at     clock.Time
	active bool
	// The head message's end in n.ends: when, the order it was set in
	// (ties), and the QP's index in the heap (-1: none).
	end     clock.Time
	endSeq  uint64
	heapIdx int
	mark    uint64
	// sent is the wire bytes the QP finished sending.
	sent float64
}

type msg struct {
	left   float64 // wire bytes not sent yet
	landed func()
	done   func()
}

// NewQP returns a QP whose paths cross the given links (one []Use per
// path; a link listed twice in a path counts once, shares summed), whose
// messages land oneWay after their last byte leaves and complete back
// later.
func (n *Net) NewQP(paths [][]Use, oneWay, back clock.Duration) *QP {
	ps := make([][]Use, len(paths))
	for i, p := range paths {
		ps[i] = mergeUses(p)
	}
	return &QP{n: n, paths: ps, oneWay: oneWay, back: back, rates: make([]float64, len(paths)),
		flows: make([]int32, len(paths)), heapIdx: -1}
}

// mergeUses returns us with each link once, shares summed.
func mergeUses(us []Use) []Use {
	out := make([]Use, 0, len(us))
	for _, u := range us {
		i := 0
		for i < len(out) && out[i].Link != u.Link {
			i++
		}
		if i < len(out) {
			out[i].Share += u.Share
		} else {
			out = append(out, u)
		}
	}
	return out
}

// Post queues a message of wire bytes on the wire (headers included);
// landed (if set) runs when it has arrived at the peer, done (if set)
// when its completion reaches the sender.
func (q *QP) Post(wire int, landed, done func()) {
	q.msgs = append(q.msgs, msg{left: float64(max(wire, 1)), landed: landed, done: done})
	if !q.active {
		q.active = true
		q.at = q.n.e.Now()
		for i, p := range q.paths {
			q.flows[i] = q.n.solver.add(p, q, i)
		}
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

// recompute brings the flows' rates up to date and moves the ends of the
// QPs whose rates changed.
func (n *Net) recompute() {
	n.pending = false
	n.Recomputes++
	now := n.e.Now()
	changed := n.solver.solve()
	n.mark++
	n.affected = n.affected[:0]
	for _, id := range changed {
		q := n.solver.flows[id].owner
		if q.mark != n.mark {
			q.mark = n.mark
			q.advance(now) // at the rate it had
			n.affected = append(n.affected, q)
		}
	}
	for _, id := range changed {
		f := &n.solver.flows[id]
		f.owner.rates[f.path] = f.rate
	}
	for _, q := range n.affected {
		q.rate = 0
		for _, r := range q.rates {
			q.rate += r
		}
		q.schedule()
	}
}

// schedule sets the end of the QP's head message at its current rate.
func (q *QP) schedule() {
	n := q.n
	if q.head >= len(q.msgs) || q.rate <= 0 {
		n.ends.remove(q)
		return
	}
	left := q.msgs[q.head].left
	d := clock.Duration(math.Ceil(min(left*8/q.rate*float64(clock.Second), maxEnd)))
	n.seq++
	q.end, q.endSeq = n.e.Now().Add(d), n.seq
	n.ends.set(q)
	n.arm()
}

// arm keeps the engine timer at the earliest end (or earlier).
func (n *Net) arm() {
	if n.ends.len() == 0 {
		return
	}
	first := n.ends.qs[0].end
	if n.timer != nil && n.timerAt <= first {
		return
	}
	if n.timer != nil {
		n.timer.Stop()
	}
	n.timerAt = first
	n.timer = n.e.AfterFunc(first.Sub(n.e.Now()), n.fire)
}

// fire ends every head message due by now, ties within TieTolerance
// included, in the order of their ends.
func (n *Net) fire() {
	n.timer = nil
	now := n.e.Now()
	limit := now.Add(TieTolerance(now))
	for n.ends.len() > 0 && n.ends.qs[0].end <= limit {
		q := n.ends.qs[0]
		n.ends.remove(q)
		q.sentHead()
	}
	n.arm()
}

// sentHead ends the head message: it lands and completes later; the next
// one goes on at the same rate, or the QP stops sending.
func (q *QP) sentHead() {
	n := q.n
	now := n.e.Now()
	q.advance(now)
	m := q.msgs[q.head]
	q.sent += m.left
	q.msgs[q.head] = msg{}
	q.head++
	if m.landed != nil {
		n.e.AfterFunc(q.oneWay, m.landed)
	}
	if m.done != nil {
		n.e.AfterFunc(q.oneWay+q.back, m.done)
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
	for i, id := range q.flows {
		n.solver.remove(id)
		q.rates[i] = 0
	}
	q.rate = 0
	n.changed()
}

// endHeap is a min-heap of QPs by the end of their head message (then the
// order the ends were set in), each QP knowing its index.
type endHeap struct{ qs []*QP }

func (h *endHeap) len() int { return len(h.qs) }

func (h *endHeap) less(i, j int) bool {
	a, b := h.qs[i], h.qs[j]
	return a.end < b.end || a.end == b.end && a.endSeq < b.endSeq
}

// set puts q in the heap, or moves it to its new end.
func (h *endHeap) set(q *QP) {
	if q.heapIdx < 0 {
		q.heapIdx = len(h.qs)
		h.qs = append(h.qs, q)
	}
	h.down(q.heapIdx)
	h.up(q.heapIdx)
}

func (h *endHeap) remove(q *QP) {
	i := q.heapIdx
	if i < 0 {
		return
	}
	last := len(h.qs) - 1
	h.swap(i, last)
	h.qs = h.qs[:last]
	q.heapIdx = -1
	if i < last {
		h.down(i)
		h.up(i)
	}
}

func (h *endHeap) swap(i, j int) {
	h.qs[i], h.qs[j] = h.qs[j], h.qs[i]
	h.qs[i].heapIdx, h.qs[j].heapIdx = i, j
}

func (h *endHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *endHeap) down(i int) {
	n := len(h.qs)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}
