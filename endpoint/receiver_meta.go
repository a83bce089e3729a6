package endpoint

import (
	"fmt"

	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// MetaRoCE responder: out-of-order placement, a receive bitmap over the
// window, in-order completion, and SACKs.

// onMetaRequest handles a request on a MetaRoCE QP: a MetaRoCE data packet
// (SEND or WRITE with a Placement header) or a READ request.
func (s *responder) onMetaRequest(p *wire.Packet, base wire.Opcode, trimmed bool) {
	qp := s.qp
	seq := s.qp.nic.unwrap(p.PSN, s.ePSN)
	window := uint64(qp.cfg.Window)
	if seq >= s.ePSN && seq-s.ePSN < window {
		s.reserve(seq + 1)
	}
	if trimmed {
		qp.ctr.trimsRx++
		if seq >= s.ePSN && !s.bits[seq&s.mask] {
			fl := metaroce.SACKTrim
			if qp.nic.mut(MutNoTrimFlag) {
				fl = 0
			}
			s.sendSACK(seq, fl)
		}
		return
	}
	if base == wire.OpReadRequest {
		switch {
		case seq < s.ePSN:
			qp.ctr.dupPkts++
			s.execRead(p, seq)
		case seq == s.ePSN:
			if s.execRead(p, seq) {
				s.markRead(seq, p)
				s.advance()
			}
		case seq-s.ePSN < window:
			qp.ctr.outOfOrder++
			if _, ok := s.pending[seq]; !ok {
				cp := *p
				s.pending[seq] = &cp
			}
		}
		return
	}
	if seq < s.ePSN || seq-s.ePSN < window && s.bits[seq&s.mask] {
		qp.ctr.dupPkts++
		s.sendSACK(seq, metaroce.SACKDup)
		return
	}
	if seq-s.ePSN >= window || seq > s.ePSN && qp.nic.mut(MutNoOOOPlacement) {
		qp.ctr.rxDropped++
		return
	}
	var h metaroce.Placement
	var data []byte
	if p.Raw != nil {
		rest, err := metaroce.DecodePlacement(p.Payload(), &h)
		if err != nil {
			qp.ctr.rxDropped++
			return
		}
		data = rest
	} else {
		placementFromDesc(p, &h)
	}
	n := uint64(p.PayloadLen)
	if data != nil {
		n = uint64(len(data))
	}
	d := rxDone{last: h.Flags&metaroce.PlaceLast != 0, length: h.MsgLen, imm: h.Imm, hasImm: h.Flags&metaroce.PlaceImm != 0}
	if base <= wire.OpSendOnlyImm {
		k := s.rqSSN + uint32(psnDiff(h.MsgSeq&psnMask, s.rqSSN&psnMask))
		idx := int(k - s.rqSSN)
		if idx < 0 {
			qp.ctr.dupPkts++
			s.sendSACK(seq, metaroce.SACKDup)
			return
		}
		if !s.fill(idx + 1) {
			s.rnr(seq)
			return
		}
		e := s.rq[idx]
		if uint64(h.MsgLen) > uint64(e.wr.Local.Length) || h.Addr+n > uint64(h.MsgLen) {
			s.nak(seq, wire.SyndromeNAKInvalidRequest, fmt.Errorf("PSN %#x: %w", p.PSN, errTooLong))
			return
		}
		if e.mr != nil && data != nil && n > 0 {
			copy(e.mr.slice(e.wr.Local.Addr+h.Addr, n), data)
		}
		d.recv = d.last
	} else {
		if d.hasImm && d.last {
			k := s.rqSSN + uint32(psnDiff(h.MsgSeq&psnMask, s.rqSSN&psnMask))
			if idx := int(k - s.rqSSN); !s.fill(idx + 1) {
				s.rnr(seq)
				return
			}
			d.recv, d.write = true, true
		}
		if n > 0 || h.Flags&metaroce.PlaceFirst != 0 && h.MsgLen > 0 {
			mr, err := qp.nic.lookup(h.RKey, true, qp.pd, h.Addr, n, AccessRemoteWrite)
			if err != nil {
				s.nak(seq, wire.SyndromeNAKRemoteAccess, err)
				return
			}
			if data != nil && n > 0 {
				copy(mr.slice(h.Addr, n), data)
			}
		}
	}
	qp.ctr.rxDataBytes += int64(n)
	s.bits[seq&s.mask] = true
	s.done[seq&s.mask] = d
	hole := s.hi > s.ePSN // packets were missing before this one
	s.hi = max(s.hi, seq+1)
	s.advance()
	// Acknowledge at once while packets are missing, and when this packet
	// filled the last hole: the sender may be waiting for exactly this
	// (a tail whose last packet overtook an earlier one on another path),
	// and a coalesced ACK would leave it to the retransmission timeout.
	if hole || s.hi > s.ePSN {
		s.sendSACK(seq, 0)
		return
	}
	s.acked(p, d.last)
}

// markRead marks the sequence numbers of an executed READ as arrived.
func (s *responder) markRead(seq uint64, p *wire.Packet) {
	n := readPkts(int(p.DMALen), s.qp.mtu)
	s.reserve(seq + uint64(n))
	for i := range uint64(n) {
		s.bits[(seq+i)&s.mask] = true
		s.done[(seq+i)&s.mask] = rxDone{last: i == uint64(n-1)}
	}
	s.hi = max(s.hi, seq+uint64(n))
}

// advance moves the cumulative PSN over what arrived, completing messages
// in order and executing READs whose turn has come.
func (s *responder) advance() {
	for {
		if s.bits[s.ePSN&s.mask] {
			i := s.ePSN & s.mask
			d := s.done[i]
			s.bits[i], s.done[i] = false, rxDone{}
			s.ePSN++
			if d.last {
				s.msn++
			}
			if d.recv {
				s.consume(d.write, d.length, d.imm, d.hasImm)
			}
			continue
		}
		if p, ok := s.pending[s.ePSN]; ok {
			delete(s.pending, s.ePSN)
			if !s.execRead(p, s.ePSN) {
				return
			}
			s.markRead(s.ePSN, p)
			continue
		}
		return
	}
}

// sendSACK sends a selective acknowledgement triggered by seq.
func (s *responder) sendSACK(trigger uint64, flags uint8) {
	qp := s.qp
	n := qp.nic
	s.unacked = 0
	sk := metaroce.SACK{Flags: flags, Trigger: uint32(trigger), MSN: s.msn}
	base := s.ePSN + 1 // bit i: ePSN+1+i (cumulative ack is ePSN−1, ePSN is missing)
	if n.mut(MutSACKBitmapOff1) {
		base = s.ePSN
	}
	for i := 0; i < 32*metaroce.MaxSACKWords && base+uint64(i) < s.hi; i++ {
		if s.bits[(base+uint64(i))&s.mask] {
			sk.Bitmap[i/32] |= 1 << uint(i%32)
			sk.Words = i/32 + 1
		}
	}
	if flags == 0 && len(s.reads) > 0 {
		s.ackAfterReads = true
		return
	}
	var buf [metaroce.SACKHeaderLen + 4*metaroce.MaxSACKWords]byte
	p := qp.header(metaroce.OpSACK, n.opts.AckDSCP, false, qp.pathPort(0, 0), uint32(s.ePSN-1))
	qp.ctr.sacksTx++
	n.sendCtrl(n.finish(p, true, metaroce.AppendSACK(buf[:0], &sk), nil, 0))
}
