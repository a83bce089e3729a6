package endpoint

import (
	"math/bits"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// MetaRoCE sender: selective acknowledgement and selective retransmission.
//
// A SACK acknowledges every PSN up to its cumulative PSN, the PSNs its
// bitmap names and its trigger PSN. READ sequence numbers are acknowledged
// only by their responses, never by SACKs (a SACK covering them says the
// request arrived). A packet is declared lost when a packet sent after it
// on the same path (a later path sequence number) is known delivered and
// a round trip and the reordering window have passed since it was sent
// (reorder.go: switches that spray a path's packets reorder them), or
// when a SACK says it arrived trimmed, or at a timeout.

// onSACK handles a MetaRoCE selective acknowledgement.
func (r *requester) onSACK(p *wire.Packet) {
	qp := r.qp
	if qp.state != StateRTS || p.Raw == nil {
		return
	}
	var s metaroce.SACK
	if err := metaroce.DecodeSACK(p.Payload(), &s); err != nil {
		qp.ctr.rxDropped++
		return
	}
	qp.ctr.sacksRx++
	cum := r.qp.nic.unwrap(p.PSN, r.una)
	r.onCumAck(cum)
	for i := range 32 * s.Words {
		if s.Has(i) {
			r.delivered(cum + 2 + uint64(i))
		}
	}
	trig := r.qp.nic.unwrap(s.Trigger, r.una)
	if s.Flags&metaroce.SACKTrim != 0 && !qp.nic.mut(MutIgnoreTrim) {
		qp.ctr.trimsRx++
		if trig >= r.una && trig < r.maxSent && !r.rec(trig).acked && !r.rec(trig).read {
			r.markLost(trig, true)
		}
	} else {
		r.delivered(trig)
	}
	if s.Flags&metaroce.SACKECE != 0 {
		qp.ctr.eceRx++
	}
	r.detectLoss()
	if qp.nic.mut(MutGoBackNInMeta) {
		for s := r.una; s < r.maxSent; s++ {
			if rc := r.rec(s); !rc.lost && s > cum && !rc.read {
				rc.acked = false
				r.markLost(s, false)
			}
		}
	}
	r.advance()
}

// onCumAck acknowledges every non-READ sequence number up to cum.
func (r *requester) onCumAck(cum uint64) {
	if cum >= r.maxSent {
		cum = r.maxSent - 1
	}
	for s := max(r.cumScan, r.una); s <= cum; s++ {
		r.delivered(s)
	}
	r.cumScan = max(r.cumScan, cum+1)
	r.detectLoss()
	r.advance()
}

// delivered marks seq acknowledged and notes its path's progress.
func (r *requester) delivered(seq uint64) {
	if seq < r.una || seq >= r.maxSent {
		return
	}
	rc := r.rec(seq)
	if rc.acked || rc.read {
		return
	}
	rc.acked = true
	now := r.qp.nic.sched.Now()
	r.onAcked(rc, now)
	r.armRTO(now) // any new acknowledgement defers the timeout
	if int(rc.path) < len(r.paths) {
		pa := r.paths[rc.path]
		pa.delivered(rc.pathSeq)
		r.markDirty(int(rc.path))
		pa.cc.OnFeedback(cc.Feedback{Kind: cc.Ack, Bytes: int64(r.qp.mtu)})
	}
}

// detectLoss walks the FIFO of each path that learnt of a delivery since
// the last walk, in path order: entries resolved (acknowledged, or sent
// again since) are dropped; an unacknowledged entry older than the path's
// highest delivered packet is lost.
//
// A path with no new delivery is skipped: its walk stopped at an entry
// that was not lost, and only a delivery on the same path (a higher
// hiDelivered or hiOld, or that entry acknowledged) can change that — an
// entry sent again elsewhere or passed by una only becomes skippable, which
// matters once a later delivery makes the walk go on. Skipping keeps an
// acknowledgement O(paths it names) instead of O(paths), which was 8 % of a
// sprayed permutation over 64 paths.
func (r *requester) detectLoss() {
	for w, set := range r.dirty {
		r.dirty[w] = 0
		for ; set != 0; set &= set - 1 {
			r.walk(r.paths[w<<6|bits.TrailingZeros64(set)])
		}
	}
}

// walk is detectLoss on one path. An overtaken packet whose reordering
// window has not passed stops the walk and arms the reordering timer (the
// packets after it were sent later: their windows end later).
func (r *requester) walk(pa *path) {
	now := r.qp.nic.sched.Now()
	for pa.head < len(pa.fifo) {
		e := pa.fifo[pa.head]
		if e.seq >= r.una && e.seq < r.maxSent {
			rc := r.rec(e.seq)
			if !rc.acked && rc.pathSeq == e.pathSeq && !rc.read {
				if !pa.lostBefore(e.pathSeq) {
					break
				}
				if dl := r.reo.deadline(rc.sentAt, r.qp.cfg.Timeout); now < dl && !r.qp.nic.mut(MutFIFOLoss) {
					r.armReorder(dl)
					break
				}
				r.markLost(e.seq, false)
				pa.lost(r.qp)
			}
		}
		pa.head++
	}
	if pa.head > 1024 && pa.head*2 > len(pa.fifo) {
		pa.fifo = append(pa.fifo[:0], pa.fifo[pa.head:]...)
		pa.head = 0
	}
}

// markLost queues seq for retransmission. count says whether to count the
// loss on the path here (the FIFO walk counts its own).
func (r *requester) markLost(seq uint64, count bool) {
	rc := r.rec(seq)
	if rc.lost {
		return
	}
	rc.lost = true
	r.retx = append(r.retx, seq)
	r.qp.ctr.sackHoles++
	if !rc.read {
		r.qp.creditAsk(r.qp.framesBytes(1, r.qp.mtu))
	}
	if count && int(rc.path) < len(r.paths) {
		r.paths[rc.path].lost(r.qp)
	}
	r.qp.nic.activate(r.qp)
}

// markLostBefore queues every unacknowledged sequence number last sent
// before t (the timeout's sweep).
func (r *requester) markLostBefore(t clock.Time) {
	for s := r.una; s < r.maxSent; s++ {
		rc := r.rec(s)
		if !rc.acked && !rc.lost && rc.sentAt <= t {
			r.markLost(s, false)
		}
	}
}

// advance moves una over acknowledged sequence numbers and completes WRs.
func (r *requester) advance() {
	old := r.una
	for r.una < r.maxSent && r.rec(r.una).acked {
		r.una++
	}
	if r.una != old {
		r.progress()
	}
}
