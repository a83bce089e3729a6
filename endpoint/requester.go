package endpoint

import (
	"errors"
	"fmt"
	"sort"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/slide"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// swqe is a send WR being carried out.
type swqe struct {
	wr     SendWR
	mr     *MR
	parts  []sgPart // a READ's scatter list (its data lands in mr first)
	first  uint64   // sequence number of its first packet (READ: first response)
	npkts  int
	ssn    uint32 // send sequence number (SEND, WRITE with immediate)
	got    int    // READ: responses received
	hi     int    // READ: index of the highest response received (-1: none)
	rereq  uint64 // READ, go-back-N: the response last re-requested from
	status Status
	err    error
}

func (w *swqe) last() uint64 { return w.first + uint64(w.npkts) - 1 }

// txRec is the sender's record of one sequence number in flight.
type txRec struct {
	sentAt  clock.Time
	pathSeq uint64
	path    uint8
	acked   bool // delivered (READ: its response arrived)
	lost    bool // waiting in the retransmit queue
	read    bool
	resent  bool // sent more than once
}

// requester is the send side of a QP.
type requester struct {
	qp       *QP
	sq       []*swqe  // posted, not yet completed; sq[0] is the oldest
	sqBuf    []*swqe  // the array sq lies in (slide.Append)
	spare    []*swqe  // completed WQEs for the next posts (newWQE)
	dirty    []uint64 // paths to walk at the next detectLoss (bit i: path i)
	nextSeq  uint64   // next sequence number to transmit (go-back-N rewinds it)
	maxSent  uint64   // one past the highest sequence number transmitted
	allocSeq uint64   // next sequence number to assign to a posted WR
	una      uint64   // oldest sequence number not yet acknowledged
	cumScan  uint64   // MetaRoCE: SACK cumulative acks processed below it
	ssn      uint32
	ring     []txRec
	mask     uint64
	retx     []uint64 // MetaRoCE: sequence numbers to retransmit
	paths    []*path
	rrPath   int
	vnow     clock.Time // virtual time of the path scheduler (start tag of the last frame)
	reo      reorder    // MetaRoCE: round trips and the reordering window
	sinceReq int

	rtoTimer    clock.Timer
	rtoDeadline clock.Time
	rtoAt       clock.Time // when rtoTimer fires
	rtoFn       func()
	backoff     int
	retries     int
	rnrRetries  int
	rnrUntil    clock.Time
}

// seqBase puts the first PSN 2^32 into the 64-bit sequence space, so that
// sequence numbers never go below zero and their low 24 bits are the PSN.
const seqBase = 1 << 32

func (r *requester) init(qp *QP) error {
	r.qp = qp
	start := seqBase | uint64(qp.cfg.PSN)
	r.nextSeq, r.maxSent, r.allocSeq, r.una, r.cumScan = start, start, start, start, start
	r.ring = make([]txRec, min(qp.cfg.Window, initialRing))
	r.mask = uint64(len(r.ring) - 1)
	r.backoff = 1
	r.rtoFn = r.onTimeout
	return r.setPaths(1)
}

// post validates and queues a send WR.
func (r *requester) post(wr SendWR) error {
	qp := r.qp
	if len(r.sq) >= qp.cfg.MaxSendWR {
		return fmt.Errorf("qp %#x: send queue full (%d WRs)", qp.qpn, len(r.sq))
	}
	if wr.Opcode > WRAtomicFetchAdd {
		return fmt.Errorf("qp %#x: post send: bad opcode %d", qp.qpn, wr.Opcode)
	}
	if wr.Opcode.atomic() {
		if err := r.checkAtomic(wr); err != nil {
			return err
		}
	}
	w := r.newWQE(wr)
	if wr.Local.Length > 0 || len(wr.More) > 0 {
		need := Access(0)
		if wr.Opcode.readsBack() {
			need = AccessLocalWrite
		}
		mr, local, parts, err := qp.nic.sgList(qp.pd, wr.Local, wr.More, need)
		if err != nil {
			// As a NIC does: the WR completes in error and the QP fails.
			slide.Append(&r.sq, &r.sqBuf, w)
			w.status, w.err = StatusLocalProtection, fmt.Errorf("local SGE: %w", err)
			qp.fail(w.err)
			return nil
		}
		w.mr, w.wr.Local, w.parts = mr, local, parts
		wr.Local = local
		if parts != nil && !wr.Opcode.readsBack() {
			gather(mr, parts)
		}
	}
	w.npkts = max(1, (int(wr.Local.Length)+qp.mtu-1)/qp.mtu)
	w.first = r.allocSeq
	r.allocSeq += uint64(w.npkts)
	if wr.Opcode == WRSend || wr.Opcode == WRSendImm || wr.Opcode == WRWriteImm {
		w.ssn = r.ssn
		r.ssn++
	}
	slide.Append(&r.sq, &r.sqBuf, w)
	if wr.Opcode.readsBack() {
		qp.creditAsk(qp.framesBytes(1, 0))
	} else {
		qp.creditAsk(qp.framesBytes(w.npkts, int(wr.Local.Length)))
	}
	if qp.neg.done || qp.nic.mut(MutEarlyMeta) {
		qp.nic.activate(qp)
	}
	return nil
}

// find returns the index in sq of the WR that owns seq, or -1.
func (r *requester) find(seq uint64) int {
	i := sort.Search(len(r.sq), func(i int) bool { return r.sq[i].last() >= seq })
	if i < len(r.sq) && r.sq[i].first <= seq {
		return i
	}
	return -1
}

func (r *requester) rec(seq uint64) *txRec { return &r.ring[seq&r.mask] }

// initialRing is the size the per-PSN rings of a QP start at; they double
// as packets in flight need, up to the window. A window-sized ring up
// front (4,096 PSNs by default) would cost every QP about 200 KB, and a
// 1,024-host permutation or an all-to-all has thousands of QPs that never
// fill it.
const initialRing = 64

// reserve makes the ring hold the records of sequence numbers [una, end);
// end-una never exceeds the window.
func (r *requester) reserve(end uint64) {
	for end-r.una > uint64(len(r.ring)) && len(r.ring) < r.qp.cfg.Window {
		ring := make([]txRec, 2*len(r.ring))
		mask := uint64(len(ring) - 1)
		for s := r.una; s < r.maxSent; s++ {
			ring[s&mask] = r.ring[s&r.mask]
		}
		r.ring, r.mask = ring, mask
	}
}

// pull returns the next packet to send now, or when one may go.
func (r *requester) pull(now clock.Time) (*wire.Packet, clock.Time) {
	qp := r.qp
	if !qp.neg.done && !qp.nic.mut(MutEarlyMeta) || len(r.sq) == 0 {
		return nil, clock.Never
	}
	if now < r.rnrUntil {
		return nil, r.rnrUntil
	}
	seq, ok := r.candidate()
	if !ok {
		return nil, clock.Never
	}
	pi, at := r.pickPath(now)
	if pi > 0 && qp.nic.mut(MutSinglePath) {
		pi = 0
	}
	if pi < 0 {
		return nil, at
	}
	w := r.sq[r.find(seq)]
	pa := r.paths[pi]
	p, count := r.build(w, seq, pa.port)
	r.reserve(seq + uint64(count))
	prevMax := r.maxSent
	isRetx := seq < prevMax
	if seq == r.nextSeq {
		r.nextSeq = seq + uint64(count)
		r.maxSent = max(r.maxSent, r.nextSeq)
	}
	pa.onSend(now, r.vnow, p.Len)
	for s := seq; s < seq+uint64(count); s++ {
		rc := r.rec(s)
		if s >= prevMax {
			*rc = txRec{read: w.wr.Opcode.readsBack()}
		}
		rc.resent = rc.resent || s < prevMax
		rc.sentAt, rc.lost, rc.path = now, false, uint8(pi)
		if qp.mode == ModeMetaRoCE {
			// Only MetaRoCE's loss detection consumes the path FIFOs;
			// RoCEv2 would only grow them with every packet sent.
			rc.pathSeq = pa.track(s)
		}
	}
	qp.ctr.txPkts++
	qp.ctr.txBytes += int64(p.Len)
	if isRetx {
		qp.ctr.retxPkts++
	}
	r.armRTO(now)
	return p, 0
}

// candidate returns the next sequence number to send: a retransmission
// first, then new data inside the window.
func (r *requester) candidate() (uint64, bool) {
	for len(r.retx) > 0 {
		s := r.retx[0]
		if s < r.una || s >= r.maxSent || r.rec(s).acked || !r.rec(s).lost {
			r.retx = r.retx[1:]
			continue
		}
		return s, true
	}
	if r.nextSeq >= r.allocSeq || r.nextSeq-r.una >= uint64(r.qp.cfg.Window) {
		return 0, false
	}
	if i := r.find(r.nextSeq); i >= 0 && r.sq[i].wr.Opcode == WRRead {
		w := r.sq[i]
		if end := r.nextSeq + uint64(min(int(w.last()-r.nextSeq)+1, r.maxReadPkts())); end-r.una > uint64(r.qp.cfg.Window) {
			return 0, false
		}
	}
	return r.nextSeq, true
}

// build returns packet seq of w and how many sequence numbers it covers
// (a READ request covers the responses it asks for).
func (r *requester) build(w *swqe, seq uint64, sport uint16) (*wire.Packet, int) {
	qp := r.qp
	n := qp.nic
	idx := int(seq - w.first)
	mtu := qp.mtu
	length := int(w.wr.Local.Length)
	if w.wr.Opcode.atomic() {
		return r.buildAtomic(w, seq, sport), 1
	}
	if w.wr.Opcode == WRRead {
		count := w.npkts - idx
		if qp.mode == ModeMetaRoCE {
			// Ask only for the run of missing responses starting at seq.
			if seq < r.maxSent {
				count = 1
				for s := seq + 1; s <= w.last() && s < r.maxSent && !r.rec(s).acked; s++ {
					count++
				}
			}
		}
		count = min(count, r.maxReadPkts())
		p := qp.header(wire.OpReadRequest, n.opts.DataDSCP, true, sport, uint32(seq))
		p.VA = w.wr.RemoteAddr + uint64(idx*mtu)
		p.RKey = w.wr.RKey
		p.DMALen = uint32(max(0, min(length-idx*mtu, count*mtu)))
		p.AckReq = true
		return n.finish(p, n.opts.Raw, nil, nil, 0), count
	}
	off := idx * mtu
	size := min(mtu, length-off)
	if length == 0 {
		size = 0
	}
	first, last := idx == 0, idx == w.npkts-1
	imm := last && (w.wr.Opcode == WRSendImm || w.wr.Opcode == WRWriteImm)
	var op wire.Opcode
	if w.wr.Opcode == WRSend || w.wr.Opcode == WRSendImm {
		op = rcOpcode(wire.OpSendFirst, first, last, imm)
	} else {
		op = rcOpcode(wire.OpWriteFirst, first, last, imm)
	}
	r.sinceReq++
	ackReq := last && !n.mut(MutNoAckReqLast) || r.sinceReq >= qp.cfg.AckReqEvery
	if ackReq {
		r.sinceReq = 0
	}
	var data []byte
	if n.opts.Raw && w.mr != nil && size > 0 {
		data = w.mr.slice(w.wr.Local.Addr+uint64(off), uint64(size))
	}
	if qp.mode == ModeMetaRoCE {
		h := metaroce.Placement{MsgSeq: w.ssn, MsgLen: w.wr.Local.Length}
		if first {
			h.Flags |= metaroce.PlaceFirst
		}
		if last {
			h.Flags |= metaroce.PlaceLast
		}
		if imm {
			h.Flags |= metaroce.PlaceImm
			h.Imm = w.wr.Imm
		}
		if op >= wire.OpWriteFirst {
			h.Addr, h.RKey = w.wr.RemoteAddr+uint64(off), w.wr.RKey
		} else {
			h.Addr = uint64(off)
		}
		p := qp.header(metaroce.DataOpcode(op), n.opts.DataDSCP, true, sport, uint32(seq))
		p.AckReq = ackReq
		var pre [metaroce.PlacementLen + 4]byte
		enc := metaroce.AppendPlacement(pre[:0], &h)
		if !n.opts.Raw {
			placementToDesc(p, &h)
		}
		return n.finish(p, n.opts.Raw, enc, data, size), 1
	}
	p := qp.header(op, n.opts.DataDSCP, true, sport, uint32(seq))
	p.AckReq = ackReq
	if op == wire.OpWriteFirst || op == wire.OpWriteOnly || op == wire.OpWriteOnlyImm {
		p.VA, p.RKey, p.DMALen = w.wr.RemoteAddr, w.wr.RKey, w.wr.Local.Length
	}
	if imm {
		p.Imm, p.HasImm = w.wr.Imm, true
	}
	return n.finish(p, n.opts.Raw, nil, data, size), 1
}

// rcOpcode picks First/Middle/Last/Only (with immediate) of SEND or WRITE.
func rcOpcode(firstOp wire.Opcode, first, last, imm bool) wire.Opcode {
	send := firstOp == wire.OpSendFirst
	switch {
	case first && last && imm:
		if send {
			return wire.OpSendOnlyImm
		}
		return wire.OpWriteOnlyImm
	case first && last:
		if send {
			return wire.OpSendOnly
		}
		return wire.OpWriteOnly
	case first:
		return firstOp
	case last && imm:
		if send {
			return wire.OpSendLastImm
		}
		return wire.OpWriteLastImm
	case last:
		return firstOp + 2
	}
	return firstOp + 1
}

// rewind goes back to seq (go-back-N).
func (r *requester) rewind(seq uint64) {
	if seq >= r.nextSeq || seq < r.una {
		return
	}
	r.qp.creditAsk(r.qp.framesBytes(int(r.nextSeq-seq), int(r.nextSeq-seq)*r.qp.mtu))
	r.nextSeq = seq
	r.qp.ctr.rewinds++
	r.qp.nic.activate(r.qp)
}

// ackThrough marks every sequence number up to seq acknowledged (for
// go-back-N: cumulative ACKs). It stops at a READ whose responses are
// missing and re-requests them.
func (r *requester) ackThrough(seq uint64) {
	if seq < r.una || seq >= r.maxSent {
		return
	}
	for _, w := range r.sq {
		if w.first > seq {
			break
		}
		if w.wr.Opcode.readsBack() && w.got < w.npkts && r.una <= w.last() {
			r.una = max(r.una, w.first+uint64(w.got))
			if w.rereq != r.una {
				w.rereq = r.una
				r.rewind(r.una)
			}
			r.progress()
			return
		}
	}
	r.una = seq + 1
	r.progress()
}

// maxSpareWQEs bounds the completed WQEs a requester keeps for reuse.
const maxSpareWQEs = 32

// newWQE returns a WQE for wr: one completed and released before when
// there is one (a QP that streams writes posts and completes one per
// write, and allocating each was half of a 2,048-rank all-reduce's
// allocations), else a new one.
func (r *requester) newWQE(wr SendWR) *swqe {
	if n := len(r.spare); n > 0 {
		w := r.spare[n-1]
		r.spare = r.spare[:n-1]
		*w = swqe{wr: wr, hi: -1}
		return w
	}
	return &swqe{wr: wr, hi: -1}
}

// release keeps w, completed and off the send queue, for a later post.
// Nothing else holds a WQE: the send queue and the calls working on it.
func (r *requester) release(w *swqe) {
	if len(r.spare) < maxSpareWQEs {
		*w = swqe{}
		r.spare = append(r.spare, w)
	}
}

// progress completes the WRs that are done, resets the retry state and
// re-arms the retransmission timer.
func (r *requester) progress() {
	qp := r.qp
	r.retries, r.backoff, r.rnrRetries = 0, 1, 0
	for len(r.sq) > 0 {
		w := r.sq[0]
		if w.last() >= r.una || w.wr.Opcode.readsBack() && w.got < w.npkts {
			break
		}
		r.sq[0] = nil
		r.sq = r.sq[1:]
		r.complete(w, StatusSuccess, nil)
		r.release(w)
	}
	if r.nextSeq < r.una {
		r.nextSeq = r.una
	}
	r.armRTO(qp.nic.sched.Now())
	qp.nic.activate(qp)
}

func (r *requester) complete(w *swqe, st Status, err error) {
	qp := r.qp
	if st == StatusSuccess && w.wr.Opcode.readsBack() && w.parts != nil {
		scatter(w.mr, w.parts, uint64(w.wr.Local.Length))
	}
	if st == StatusSuccess && !w.wr.Signaled && !qp.cfg.SignalAll {
		return
	}
	op := w.wr.Opcode.wc()
	qp.cfg.SendCQ.push(WC{WRID: w.wr.WRID, Status: st, Opcode: op, ByteLen: w.wr.Local.Length, QPN: qp.qpn, Err: err})
}

// armRTO keeps the retransmission timer running while data is in flight.
// The deadline moves forward lazily: a timer that fires early re-arms.
func (r *requester) armRTO(now clock.Time) {
	if r.una >= r.maxSent && len(r.sq) == 0 {
		return
	}
	r.rtoDeadline = now.Add(r.qp.cfg.Timeout * clock.Duration(r.backoff))
	if r.rtoTimer != nil && r.rtoAt > r.rtoDeadline {
		// The timeout shrank (progress reset the backoff): a timer armed
		// for the longer one would fire late.
		r.rtoTimer.Stop()
		r.rtoTimer = nil
	}
	if r.rtoTimer == nil {
		r.rtoAt = r.rtoDeadline
		r.rtoTimer = r.qp.nic.sched.AfterFunc(r.rtoDeadline.Sub(now), r.rtoFn)
	}
}

func (r *requester) onTimeout() {
	qp := r.qp
	r.rtoTimer = nil
	if qp.state != StateRTS {
		return
	}
	now := qp.nic.sched.Now()
	if now < r.rtoDeadline {
		r.rtoAt = r.rtoDeadline
		r.rtoTimer = qp.nic.sched.AfterFunc(r.rtoDeadline.Sub(now), r.rtoFn)
		return
	}
	if r.una >= r.maxSent {
		return // nothing in flight
	}
	qp.ctr.timeouts++
	r.retries++
	if r.retries > qp.cfg.RetryCount {
		r.failHead(StatusRetryExceeded, errors.New("transport retry counter exceeded"))
		return
	}
	if !qp.nic.mut(MutNoBackoff) {
		r.backoff = min(r.backoff*2, 64)
	}
	if qp.mode == ModeMetaRoCE {
		// Re-select first, so that the retransmissions go on the new port.
		if rc := r.rec(r.una); !rc.acked && !qp.nic.mut(MutNoReselect) {
			r.paths[rc.path%uint8(len(r.paths))].reselect(qp, "timeout")
		}
		r.markLostBefore(now.Add(-qp.cfg.Timeout / 2))
	} else {
		r.rewind(r.una)
	}
	for _, pa := range r.paths {
		pa.lossFeedback()
	}
	r.armRTO(now)
	qp.nic.activate(qp)
}

// failHead completes the oldest WR with st and moves the QP to ERROR.
func (r *requester) failHead(st Status, err error) {
	qp := r.qp
	if len(r.sq) > 0 {
		w := r.sq[0]
		r.sq = r.sq[1:]
		w.status, w.err = st, err
		qp.cfg.SendCQ.push(WC{WRID: w.wr.WRID, Status: st, Opcode: w.wr.Opcode.wc(), QPN: qp.qpn, Err: err})
	}
	qp.fail(err)
}

// flush completes every outstanding WR with StatusFlush (the first with its
// own error status if it already has one).
func (r *requester) flush() {
	qp := r.qp
	if r.rtoTimer != nil {
		r.rtoTimer.Stop()
		r.rtoTimer = nil
	}
	r.stopReorder()
	for _, w := range r.sq {
		st, err := StatusFlush, error(errors.New("flushed"))
		if w.err != nil {
			st, err = w.status, w.err
		}
		qp.cfg.SendCQ.push(WC{WRID: w.wr.WRID, Status: st, Opcode: w.wr.Opcode.wc(), QPN: qp.qpn, Err: err})
	}
	r.sq = nil
	r.retx = nil
}

func (r *requester) closeCC() {
	for _, pa := range r.paths {
		pa.cc.Close()
	}
}

// maxReadPkts is the most responses one READ request asks for: a quarter
// of the window. Longer READs are carried out as several requests, as NICs
// split them at their maximum read size.
func (r *requester) maxReadPkts() int { return max(1, r.qp.cfg.Window/4) }
