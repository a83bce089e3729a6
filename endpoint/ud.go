package endpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/slide"
	"github.com/rocelab/rocelab/wire"
)

// QPType is a QP's transport service.
type QPType uint8

// Transport services.
const (
	// TypeRC is reliable connected: the transport of every lab workload.
	TypeRC QPType = iota
	// TypeUD is unreliable datagram (the InfiniBand specification, RoCEv2): single
	// packet SENDs to any QP named by the WR (UDDest), no
	// acknowledgement, no retransmission; a datagram that finds no
	// receive WQE or the wrong Q_Key is dropped. The receiver gets the
	// sender's QP number and, first in its buffer, 40 bytes of GRH — for
	// an IPv4 RoCEv2 packet, 20 zero bytes and the packet's IPv4 header.
	TypeUD
)

// GRHLen is what a UD receive places before the payload.
const GRHLen = 40

// UDDest is where a UD send WR goes: an address handle's destination, the
// remote QP and its Q_Key.
type UDDest struct {
	IP   netip.Addr
	QPN  uint32
	QKey uint32
}

// udState is a UD QP's send side: WRs waiting for the wire, and the next
// PSN (UD packets carry one; nothing checks it).
type udState struct {
	sq    []*swqe
	sqBuf []*swqe
	psn   uint32
}

// errUDOp is a UD send WR with an operation other than SEND.
var errUDOp = errors.New("a UD QP sends SENDs only")

// postUD validates and queues a UD send WR.
func (qp *QP) postUD(wr SendWR) error {
	u := &qp.ud
	if len(u.sq) >= qp.cfg.MaxSendWR {
		return fmt.Errorf("qp %#x: send queue full (%d WRs)", qp.qpn, len(u.sq))
	}
	if wr.Opcode != WRSend && wr.Opcode != WRSendImm {
		return fmt.Errorf("qp %#x: %w", qp.qpn, errUDOp)
	}
	if wr.UD == nil || !wr.UD.IP.IsValid() || wr.UD.IP.Is4() != qp.nic.opts.IP.Is4() {
		return fmt.Errorf("qp %#x: a UD send WR needs a destination of the NIC's address family", qp.qpn)
	}
	w := qp.req.newWQE(wr)
	if wr.Local.Length > 0 || len(wr.More) > 0 {
		mr, local, parts, err := qp.nic.sgList(qp.pd, wr.Local, wr.More, 0)
		if err == nil && local.Length > uint32(qp.mtu) {
			err = fmt.Errorf("a %d-byte datagram on a path MTU of %d", local.Length, qp.mtu)
			w.status = StatusLocalLength
		}
		if err != nil {
			if w.status == StatusSuccess {
				w.status = StatusLocalProtection
			}
			w.err = fmt.Errorf("local SGE: %w", err)
			qp.cfg.SendCQ.push(WC{WRID: wr.WRID, Status: w.status, Opcode: WCSend, QPN: qp.qpn, Err: w.err})
			qp.fail(w.err)
			return nil
		}
		w.mr, w.wr.Local = mr, local
		if parts != nil {
			gather(mr, parts)
		}
	}
	slide.Append(&u.sq, &u.sqBuf, w)
	qp.nic.activate(qp)
	return nil
}

// pullUD returns the next datagram, completing its WR as it leaves.
func (qp *QP) pullUD(now clock.Time) (*wire.Packet, clock.Time) {
	u := &qp.ud
	if qp.state != StateRTS || len(u.sq) == 0 {
		return nil, clock.Never
	}
	w := u.sq[0]
	u.sq = u.sq[1:]
	op := wire.OpUDSendOnly
	if w.wr.Opcode == WRSendImm {
		op = wire.OpUDSendOnlyImm
	}
	n := qp.nic
	p := qp.header(op, n.opts.DataDSCP, true, udpSourcePort(qp.qpn), u.psn)
	u.psn = (u.psn + 1) & psnMask
	p.DstIP, p.DestQP = w.wr.UD.IP, w.wr.UD.QPN
	p.DstMAC = [6]byte{}
	qkey := w.wr.UD.QKey
	if qkey&0x80000000 != 0 {
		// A Q_Key with its high bit set asks for the QP's own, as in InfiniBand.
		qkey = qp.cfg.QKey
	}
	p.SetDETH(qkey, qp.qpn)
	p.Imm, p.HasImm = w.wr.Imm, op == wire.OpUDSendOnlyImm
	size := int(w.wr.Local.Length)
	var data []byte
	if n.opts.Raw && w.mr != nil && size > 0 {
		data = w.mr.slice(w.wr.Local.Addr, uint64(size))
	}
	p = n.finish(p, n.opts.Raw, nil, data, size)
	qp.ctr.txPkts++
	qp.ctr.txBytes += int64(p.Len)
	if w.wr.Signaled || qp.cfg.SignalAll {
		qp.cfg.SendCQ.push(WC{WRID: w.wr.WRID, Status: StatusSuccess, Opcode: WCSend, ByteLen: uint32(size), QPN: qp.qpn})
	}
	qp.req.release(w)
	return p, 0
}

// udpSourcePort is a UD QP's UDP source port: flow entropy from the QPN.
func udpSourcePort(qpn uint32) uint16 { return 0xC000 | uint16(qpn*2654435761>>18)&0x3FFF }

// receiveUD takes a datagram addressed to a UD QP.
func (qp *QP) receiveUD(p *wire.Packet) {
	op := wire.Opcode(p.Opcode)
	if op != wire.OpUDSendOnly && op != wire.OpUDSendOnlyImm || qp.state != StateRTR && qp.state != StateRTS {
		qp.ctr.rxDropped++
		return
	}
	qkey, src := p.DETH()
	if qkey != qp.cfg.QKey && !qp.nic.mut(MutUDAnyQKey) {
		qp.ctr.rxDropped++ // a Q_Key violation drops the datagram, as in InfiniBand
		return
	}
	s := &qp.rsp
	if !s.fill(1) {
		qp.ctr.rxDropped++ // no receive WQE: a datagram is dropped, not NAKed
		return
	}
	e := s.rq[0]
	s.rq = s.rq[1:]
	n := uint32(p.PayloadLen)
	wc := WC{WRID: e.wr.WRID, Status: StatusSuccess, Opcode: WCRecv, ByteLen: GRHLen + n, QPN: qp.qpn,
		SrcQP: src, GRH: true, IPv6: p.IPVersion == 6, Imm: p.Imm, HasImm: p.HasImm}
	if uint64(GRHLen)+uint64(n) > uint64(e.wr.Local.Length) {
		wc.Status, wc.Err = StatusLocalLength, fmt.Errorf("a %d-byte datagram for a %d-byte buffer", GRHLen+n, e.wr.Local.Length)
		qp.cfg.RecvCQ.push(wc)
		return
	}
	if e.mr != nil {
		if dst := e.mr.slice(e.wr.Local.Addr, uint64(GRHLen)+uint64(n)); dst != nil {
			grh := GRHLen
			if qp.nic.mut(MutUDNoGRH) {
				grh = 0
			} else {
				putGRH(dst[:GRHLen], p)
			}
			if data := p.Payload(); data != nil {
				copy(dst[grh:], data)
			}
		}
		if e.parts != nil {
			scatter(e.mr, e.parts, uint64(GRHLen)+uint64(n))
		}
	}
	qp.ctr.rxDataBytes += int64(n)
	qp.cfg.RecvCQ.push(wc)
}

// putGRH writes the 40 bytes a UD receive places first: for IPv6 the
// packet's IPv6 header; for IPv4, 20 zero bytes and its IPv4 header (as
// RoCEv2 NICs do, and as rdma-core's ibv_init_ah_from_wc reads it).
func putGRH(b []byte, p *wire.Packet) {
	clear(b)
	if p.Raw != nil && int(p.L3Offset)+20 <= len(p.Raw) {
		if p.IPVersion == 4 {
			copy(b[20:], p.Raw[p.L3Offset:p.L3Offset+20])
			return
		}
		if int(p.L3Offset)+40 <= len(p.Raw) {
			copy(b, p.Raw[p.L3Offset:p.L3Offset+40])
			return
		}
	}
	// No bytes (a payload-free run): the header from the descriptor.
	if p.IPVersion == 4 {
		h := b[20:]
		h[0] = 0x45
		h[1] = p.DSCP<<2 | p.ECN
		binary.BigEndian.PutUint16(h[2:], uint16(p.Len-wire.EthernetLen))
		h[8], h[9] = p.TTL, wire.ProtoUDP
		s, d := p.SrcIP.As4(), p.DstIP.As4()
		copy(h[12:], s[:])
		copy(h[16:], d[:])
		return
	}
	binary.BigEndian.PutUint32(b, 6<<28|uint32(p.DSCP<<2|p.ECN)<<20|p.FlowLabel)
	b[6], b[7] = wire.ProtoUDP, p.TTL
	s, d := p.SrcIP.As16(), p.DstIP.As16()
	copy(b[8:], s[:])
	copy(b[24:], d[:])
}

// Type returns the QP's transport service.
func (qp *QP) Type() QPType { return qp.cfg.Type }

// SetQKey sets a UD QP's Q_Key (verbs give it with the move to INIT).
func (qp *QP) SetQKey(qkey uint32) { qp.cfg.QKey = qkey }
