package endpoint

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/slide"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

type rwqe struct {
	wr    RecvWR
	mr    *MR
	parts []sgPart // a scatter list: the message lands in mr, then here
}

// newRWQE looks a receive WR's buffers up in pd.
func newRWQE(n *NIC, pd *PD, wr RecvWR) (rwqe, error) {
	e := rwqe{wr: wr}
	if wr.Local.Length > 0 || len(wr.More) > 0 {
		mr, local, parts, err := n.sgList(pd, wr.Local, wr.More, AccessLocalWrite)
		if err != nil {
			return e, err
		}
		e.mr, e.wr.Local, e.parts = mr, local, parts
	}
	return e, nil
}

// rxDone is what the responder must do when the cumulative PSN passes a
// MetaRoCE packet that ends a message.
type rxDone struct {
	last   bool // ends a message (MSN counts it)
	recv   bool // consumes a receive WQE
	write  bool // RDMA WRITE with immediate (else SEND)
	length uint32
	imm    uint32
	hasImm bool
}

// readJob is a READ being answered.
type readJob struct {
	seq    uint64 // PSN of the first response
	n, i   int    // responses in all, next to send
	mr     *MR
	addr   uint64
	length int
	path   int
	// an atomic's acknowledge: the original value it carries
	atomic bool
	orig   uint64
}

// responder is the receive side of a QP.
type responder struct {
	qp      *QP
	rq      []rwqe
	rqBuf   []rwqe // the array rq lies in (slide.Append)
	rqSSN   uint32 // send sequence number of rq[0]
	ePSN    uint64 // next expected sequence number
	msn     uint32
	unacked int
	nakSent bool
	cnpLast []cnpStamp

	// RoCEv2: the message in progress.
	cur struct {
		active, send bool
		mr           *MR
		addr         uint64 // WRITE: next address; SEND: the WQE's next address
		left         uint64 // bytes the message may still place
		total        uint32
	}

	// MetaRoCE: which sequence numbers arrived and what completes at each.
	bits    []bool
	done    []rxDone
	mask    uint64
	hi      uint64 // one past the highest sequence number arrived
	pending map[uint64]*wire.Packet

	reads   []readJob
	atomics atomicLog // the last atomics' results, for duplicates

	creditPeer    bool // the peer's requester is credit-driven
	ackAfterReads bool // an ACK waits for the queued READ responses
}

func (s *responder) init(qp *QP, psn uint32) {
	s.qp = qp
	s.ePSN = seqBase | uint64(psn)
	s.hi = s.ePSN
	w := min(qp.cfg.Window, initialRing)
	s.bits = make([]bool, w)
	s.done = make([]rxDone, w)
	s.mask = uint64(w - 1)
	s.pending = map[uint64]*wire.Packet{}
}

// reserve makes the MetaRoCE arrival bitmap hold sequence numbers
// [ePSN, end): it starts at initialRing and doubles, up to the window, as
// packets arrive further ahead of the cumulative PSN. Everything at and
// after hi is false, so only [ePSN, hi) moves.
func (s *responder) reserve(end uint64) {
	for end-s.ePSN > uint64(len(s.bits)) && len(s.bits) < s.qp.cfg.Window {
		n := 2 * len(s.bits)
		bits, done, mask := make([]bool, n), make([]rxDone, n), uint64(n-1)
		for q := s.ePSN; q < s.hi; q++ {
			bits[q&mask], done[q&mask] = s.bits[q&s.mask], s.done[q&s.mask]
		}
		s.bits, s.done, s.mask = bits, done, mask
	}
}

func (s *responder) postRecv(wr RecvWR) error {
	qp := s.qp
	if qp.cfg.SRQ != nil {
		return fmt.Errorf("qp %#x: post recv on a QP with an SRQ (post to the SRQ)", qp.qpn)
	}
	if len(s.rq) >= qp.cfg.MaxRecvWR {
		return fmt.Errorf("qp %#x: receive queue full", qp.qpn)
	}
	e, err := newRWQE(qp.nic, qp.pd, wr)
	if err != nil {
		return fmt.Errorf("qp %#x: post recv: %w", qp.qpn, err)
	}
	slide.Append(&s.rq, &s.rqBuf, e)
	return nil
}

// consume completes the oldest receive WQE.
func (s *responder) consume(write bool, length, imm uint32, hasImm bool) {
	qp := s.qp
	e := s.rq[0]
	s.rq = s.rq[1:]
	s.rqSSN++
	op := WCRecv
	if write {
		op = WCRecvWriteImm
	} else if e.parts != nil {
		scatter(e.mr, e.parts, uint64(length))
	}
	qp.cfg.RecvCQ.push(WC{WRID: e.wr.WRID, Status: StatusSuccess, Opcode: op, ByteLen: length, Imm: imm, HasImm: hasImm, QPN: qp.qpn})
}

func (s *responder) flush() {
	qp := s.qp
	if qp == nil {
		return
	}
	for _, e := range s.rq {
		qp.cfg.RecvCQ.push(WC{WRID: e.wr.WRID, Status: StatusFlush, Opcode: WCRecv, QPN: qp.qpn, Err: fmt.Errorf("flushed")})
	}
	s.rq, s.reads = nil, nil
}

// nak answers seq with an error NAK and moves the QP to ERROR.
func (s *responder) nak(seq uint64, syn uint8, err error) {
	s.qp.ctr.naksTx++
	s.sendAck(seq, s.nakSyn(syn))
	s.qp.fail(fmt.Errorf("responder: %s: %w", wire.SyndromeString(syn), err))
}

// rnr answers seq with an RNR NAK: no receive WQE.
func (s *responder) rnr(seq uint64) {
	s.qp.ctr.rnrTx++
	if s.qp.nic.mut(MutNoRNRNAK) {
		s.sendAck(seq, wire.SyndromeNAKInvalidRequest)
		return
	}
	s.sendAck(seq, wire.SyndromeRNR(s.qp.cfg.MinRNRTimer))
}

// accessSyndrome maps a memory fault to its NAK.
func accessSyndrome(err error) uint8 { return wire.SyndromeNAKRemoteAccess }

// nakSyn is the syndrome the responder sends for syn (a mutant may change it).
func (s *responder) nakSyn(syn uint8) uint8 {
	if syn == wire.SyndromeNAKRemoteAccess && s.qp.nic.mut(MutWrongNAKSyndrome) {
		return wire.SyndromeNAKRemoteOp
	}
	return syn
}

// onRequest handles a request packet (SEND, WRITE, READ request).
func (s *responder) onRequest(p *wire.Packet, base wire.Opcode, trimmed bool) {
	qp := s.qp
	meta := wire.Opcode(p.Opcode) != base
	if meta && qp.mode != ModeMetaRoCE && qp.cfg.Mode != ModeMetaRoCE {
		qp.ctr.rxDropped++
		return
	}
	if qp.mode == ModeMetaRoCE || meta {
		s.onMetaRequest(p, base, trimmed)
		return
	}
	if trimmed {
		qp.ctr.trimsRx++
		return // a RoCEv2 peer: the hole shows as a sequence error
	}
	seq := s.qp.nic.unwrap(p.PSN, s.ePSN)
	switch {
	case seq < s.ePSN:
		qp.ctr.dupPkts++
		if isAtomic(base) {
			s.replayAtomic(p, seq)
			return
		}
		if base == wire.OpReadRequest {
			// Go-back-N: the requester sends every later request again, so
			// the responses queued from seq on are dropped.
			s.dropReadsFrom(seq)
			s.execRead(p, seq)
			return
		}
		if !qp.nic.mut(MutNoDupReACK) {
			s.sendAck(s.ePSN-1, wire.SyndromeACK(0x1F))
		}
		return
	case seq > s.ePSN:
		qp.ctr.outOfOrder++
		if !s.nakSent || qp.nic.mut(MutNAKEveryOOO) {
			s.nakSent = true
			qp.ctr.naksTx++
			s.sendAck(s.ePSN, wire.SyndromeNAKPSNSequence)
		}
		return
	}
	s.nakSent = false
	if isAtomic(base) {
		if s.execAtomic(p, base, seq) {
			// The ATOMIC Acknowledge acknowledges it.
			s.ePSN++
			s.msn++
		}
		return
	}
	if base == wire.OpReadRequest {
		if s.execRead(p, seq) {
			// The responses acknowledge the READ; no ACK of its own.
			s.ePSN += uint64(readPkts(int(p.DMALen), qp.mtu))
			s.msn++
		}
		return
	}
	data := p.Payload()
	n := uint64(p.PayloadLen)
	send := base <= wire.OpSendOnlyImm
	first := base == wire.OpSendFirst || base == wire.OpSendOnly || base == wire.OpSendOnlyImm ||
		base == wire.OpWriteFirst || base == wire.OpWriteOnly || base == wire.OpWriteOnlyImm
	last := base != wire.OpSendFirst && base != wire.OpSendMiddle && base != wire.OpWriteFirst && base != wire.OpWriteMiddle
	imm := base == wire.OpSendLastImm || base == wire.OpSendOnlyImm || base == wire.OpWriteLastImm || base == wire.OpWriteOnlyImm
	c := &s.cur
	if first {
		if send {
			if !s.fill(1) {
				s.rnr(seq)
				return
			}
			e := s.rq[0]
			*c = struct {
				active, send bool
				mr           *MR
				addr         uint64
				left         uint64
				total        uint32
			}{true, true, e.mr, e.wr.Local.Addr, uint64(e.wr.Local.Length), 0}
		} else {
			var mr *MR
			if p.DMALen > 0 {
				// A zero-length WRITE touches no memory: its R_Key is not
				// checked.
				var err error
				if mr, err = qp.nic.lookup(p.RKey, true, qp.pd, p.VA, uint64(p.DMALen), AccessRemoteWrite); err != nil {
					s.nak(seq, accessSyndrome(err), err)
					return
				}
			}
			c.active, c.send, c.mr, c.addr, c.left, c.total = true, false, mr, p.VA, uint64(p.DMALen), 0
		}
	} else if !c.active || c.send != send {
		s.nak(seq, wire.SyndromeNAKInvalidRequest, fmt.Errorf("PSN %#x: %w %v", p.PSN, errBadOpcode, wire.Opcode(p.Opcode)))
		return
	}
	if n > c.left {
		syn := uint8(wire.SyndromeNAKInvalidRequest)
		if !send {
			syn = wire.SyndromeNAKRemoteAccess
		}
		s.nak(seq, syn, fmt.Errorf("PSN %#x: %w", p.PSN, errTooLong))
		return
	}
	if imm && !send && !s.fill(1) {
		s.rnr(seq)
		return
	}
	if c.mr != nil && data != nil && n > 0 {
		copy(c.mr.slice(c.addr, n), data)
	}
	c.addr += n
	c.left -= n
	c.total += uint32(n)
	qp.ctr.rxDataBytes += int64(n)
	s.ePSN++
	if last {
		c.active = false
		s.msn++
		if send || imm {
			s.consume(!send, c.total, p.Imm, imm)
		}
	}
	s.acked(p, last)
}

// acked applies the ACK coalescing rule after an in-order packet.
func (s *responder) acked(p *wire.Packet, last bool) {
	s.unacked++
	if p.AckReq || s.unacked >= s.qp.cfg.AckCoalesce {
		if s.qp.mode == ModeMetaRoCE {
			s.sendSACK(s.ePSN-1, 0)
			return
		}
		s.sendAck(s.ePSN-1, wire.SyndromeACK(0x1F))
	}
}

// sendAck sends an RC Acknowledge for seq with the given syndrome.
func (s *responder) sendAck(seq uint64, syn uint8) {
	qp := s.qp
	n := qp.nic
	s.unacked = 0
	if syn&0x60 == wire.SyndromeClassACK && len(s.reads) > 0 {
		// ACKs stay behind the READ responses queued before them, as on
		// one RC send queue: an ACK must not overtake them.
		s.ackAfterReads = true
		return
	}
	p := qp.header(wire.OpAcknowledge, n.opts.AckDSCP, false, qp.pathPort(0, 0), uint32(seq))
	p.Syndrome, p.MSN = syn, s.msn&psnMask
	qp.ctr.acksTx++
	n.sendCtrl(n.finish(p, n.opts.Raw, nil, nil, 0))
}

func readPkts(length, mtu int) int { return max(1, (length+mtu-1)/mtu) }

// execRead checks a READ request and queues its responses (PSNs from seq).
func (s *responder) execRead(p *wire.Packet, seq uint64) bool {
	qp := s.qp
	var mr *MR
	if p.DMALen > 0 {
		// A zero-length READ touches no memory: its R_Key is not checked
		// (the InfiniBand specification).
		var err error
		if mr, err = qp.nic.lookup(p.RKey, true, qp.pd, p.VA, uint64(p.DMALen), AccessRemoteRead); err != nil {
			s.nak(seq, accessSyndrome(err), err)
			return false
		}
	}
	n := readPkts(int(p.DMALen), qp.mtu)
	pi := 0
	if len(qp.req.paths) > 1 {
		pi = int(seq % uint64(len(qp.req.paths)))
	}
	j := readJob{seq: seq, n: n, mr: mr, addr: p.VA, length: int(p.DMALen), path: pi}
	if qp.mode == ModeMetaRoCE && seq < s.ePSN && len(s.reads) > 0 {
		// A re-request fills a hole: it goes ahead of the queued READs,
		// behind the one being answered.
		at := 0
		if s.reads[0].i > 0 {
			at = 1
		}
		s.reads = append(s.reads[:at], append([]readJob{j}, s.reads[at:]...)...)
	} else {
		s.reads = append(s.reads, j)
	}
	qp.nic.activate(qp)
	return true
}

// pullRead returns the next READ response, or when one may go.
func (s *responder) pullRead(now clock.Time) (*wire.Packet, clock.Time) {
	if len(s.reads) == 0 {
		return nil, clock.Never
	}
	qp := s.qp
	n := qp.nic
	j := &s.reads[0]
	pa := qp.req.paths[j.path%len(qp.req.paths)]
	if pa.next > now {
		return nil, pa.next
	}
	if j.atomic {
		return s.pullAtomicAck(j, pa, now), 0
	}
	off := j.i * qp.mtu
	size := min(qp.mtu, j.length-off)
	first, last := j.i == 0, j.i == j.n-1
	var op wire.Opcode
	switch {
	case first && last:
		op = wire.OpReadResponseOnly
	case first:
		op = wire.OpReadResponseFirst
	case last:
		op = wire.OpReadResponseLast
	default:
		op = wire.OpReadResponseMiddle
	}
	var data []byte
	if n.opts.Raw && size > 0 {
		data = j.mr.slice(j.addr+uint64(off), uint64(size))
	}
	seq := j.seq + uint64(j.i)
	var p *wire.Packet
	if qp.mode == ModeMetaRoCE {
		h := metaroce.Placement{Addr: j.addr + uint64(off), MsgLen: uint32(j.length)}
		if first {
			h.Flags |= metaroce.PlaceFirst
		}
		if last {
			h.Flags |= metaroce.PlaceLast
		}
		p = qp.header(metaroce.DataOpcode(op), n.opts.DataDSCP, true, pa.port, uint32(seq))
		var pre [metaroce.PlacementLen]byte
		enc := metaroce.AppendPlacement(pre[:0], &h)
		if !n.opts.Raw {
			placementToDesc(p, &h)
		}
		p = n.finish(p, n.opts.Raw, enc, data, size)
	} else {
		p = qp.header(op, n.opts.DataDSCP, true, pa.port, uint32(seq))
		p.Syndrome, p.MSN = wire.SyndromeACK(0x1F), s.msn&psnMask
		p = n.finish(p, n.opts.Raw, nil, data, size)
	}
	pa.next = max(pa.next, now).Add(pa.cc.Rate().Serialize(wire.OnWireBytes(p.Len)))
	if !qp.creditDriven() {
		pa.cc.OnSend(p.Len)
	}
	j.i++
	if j.i == j.n {
		s.reads[0] = readJob{}
		s.reads = s.reads[1:]
		if len(s.reads) == 0 && s.ackAfterReads {
			s.ackAfterReads = false
			if qp.mode == ModeMetaRoCE {
				s.sendSACK(s.ePSN-1, 0)
			} else {
				s.sendAck(s.ePSN-1, wire.SyndromeACK(0x1F))
			}
		}
	}
	qp.ctr.txPkts++
	qp.ctr.txBytes += int64(p.Len)
	qp.ctr.readRespTx++
	return p, 0
}

// dropReadsFrom forgets the queued READ responses with PSNs from seq on.
func (s *responder) dropReadsFrom(seq uint64) {
	keep := s.reads[:0]
	for _, j := range s.reads {
		if j.seq+uint64(j.i) >= seq {
			if j.seq >= seq {
				continue
			}
			j.n = int(seq - j.seq) // answer only what precedes seq
			if j.i >= j.n {
				continue
			}
		}
		keep = append(keep, j)
	}
	clear(s.reads[len(keep):])
	s.reads = keep
}
