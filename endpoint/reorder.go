package endpoint

import (
	"github.com/rocelab/rocelab/core/clock"
)

// MetaRoCE sender: time-based loss detection (docs/metaroce-spec.md
// MR-4.10, MR-4.20–MR-4.22), as RACK does for TCP (RFC 8985). A path is
// not FIFO when the switches spray its packets over several links, so a
// later packet of the path arriving first is no proof of loss. A packet
// is lost when a packet sent after it on its path was delivered and one
// round trip and a reordering window have passed since it was sent; until
// then a timer waits. The window starts at a quarter of the smallest round
// trip seen and doubles, up to the smoothed round trip, whenever an
// acknowledgement shows that a retransmission was needless (it came too
// soon after the resend to answer it).

// reorder is a requester's round-trip and reordering state.
type reorder struct {
	minRTT, srtt, lastRTT clock.Duration // 0: no sample yet
	mult                  int            // the window is mult × minRTT/4
	calm                  int            // round-trip samples since the last needless retransmission
	timer                 clock.Timer
	timerAt               clock.Time
	spurious              int64 // retransmissions found needless
}

// reorderDefaultRTT stands for the round trip before the first sample;
// reorderCalm is how many samples without a needless retransmission halve
// a grown window.
const (
	reorderDefaultRTT = 10 * clock.Microsecond
	reorderCalm       = 4096
)

// sample takes a round-trip sample (a first transmission's
// acknowledgement, as Karn's rule wants).
func (o *reorder) sample(d clock.Duration) {
	if d <= 0 {
		return
	}
	o.lastRTT = d
	// The window shrinks back as reordering stops: halved after every
	// reorderCalm samples without a needless retransmission.
	if o.calm++; o.calm >= reorderCalm && o.mult > 1 {
		o.mult /= 2
		o.calm = 0
	}
	if o.minRTT == 0 || d < o.minRTT {
		o.minRTT = d
	}
	if o.srtt == 0 {
		o.srtt = d
	} else {
		o.srtt += (d - o.srtt) / 8
	}
}

// rtt is the round trip the loss rule waits: the last sample's.
func (o *reorder) rtt() clock.Duration {
	if o.lastRTT == 0 {
		return reorderDefaultRTT
	}
	return o.lastRTT
}

// window is the reordering window: mult × minRTT/4, at most limit (half
// the retransmission timeout: past it the timeout finds the loss anyway),
// never zero. RACK caps its window at the smoothed round trip; a sprayed
// fabric reorders by the difference of its queues, which a round trip
// taken through the emptier ones does not bound.
func (o *reorder) window(limit clock.Duration) clock.Duration {
	base := o.minRTT
	if base == 0 {
		base = reorderDefaultRTT
	}
	w := base / 4 * clock.Duration(max(o.mult, 1))
	return max(min(w, limit), clock.Nanosecond)
}

// needless notes that a retransmission was needless: the window grows.
func (o *reorder) needless() {
	o.spurious++
	o.calm = 0
	if o.mult < 64 {
		o.mult = max(o.mult, 1) * 2
	}
}

// deadline is when a packet sent at sentAt, overtaken on its path, is
// lost, given the QP's retransmission timeout.
func (o *reorder) deadline(sentAt clock.Time, rto clock.Duration) clock.Time {
	return sentAt.Add(o.rtt() + o.window(rto/2))
}

// onAcked is told of a sequence number's first acknowledgement: a round
// trip sample if it was sent once, or a needless retransmission if the
// acknowledgement came sooner after the resend than any round trip.
func (r *requester) onAcked(rc *txRec, now clock.Time) {
	o := &r.reo
	since := now.Sub(rc.sentAt)
	switch {
	case !rc.resent:
		o.sample(since)
	case o.minRTT > 0 && since < o.minRTT:
		o.needless()
		r.qp.ctr.spuriousRetx++
	}
}

// armReorder has the reordering timer fire at t (the earliest deadline of
// a packet waiting on its window), unless it fires sooner already.
func (r *requester) armReorder(t clock.Time) {
	o := &r.reo
	if o.timer != nil {
		if o.timerAt <= t {
			return
		}
		o.timer.Stop()
	}
	now := r.qp.nic.sched.Now()
	o.timerAt = t
	o.timer = r.qp.nic.sched.AfterFunc(t.Sub(now), r.onReorderTimer)
}

// onReorderTimer walks every path again: the packets whose window passed
// are lost now.
func (r *requester) onReorderTimer() {
	r.reo.timer = nil
	if r.qp.state != StateRTS {
		return
	}
	for i := range r.paths {
		r.markDirty(i)
	}
	r.detectLoss()
	r.advance()
}

func (r *requester) stopReorder() {
	if r.reo.timer != nil {
		r.reo.timer.Stop()
		r.reo.timer = nil
	}
}
