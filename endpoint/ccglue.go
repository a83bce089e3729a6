package endpoint

import (
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// onCNP delivers a CNP to the path it names by the UDP source port the
// notification point echoed, or to every path when it names none of them
// (a CNP from a NIC that does not echo the port).
func (qp *QP) onCNP(p *wire.Packet) {
	qp.ctr.cnpRx++
	if qp.state != StateRTS && qp.state != StateRTR {
		return
	}
	fb := cc.Feedback{Kind: cc.CNP}
	if pa := qp.req.pathByPort(p.SrcPort); pa != nil {
		pa.cc.OnFeedback(fb)
		return
	}
	for _, pa := range qp.req.paths {
		pa.cc.OnFeedback(fb)
	}
}

// Credit flow identifiers at the receiver NIC are localQPN<<8 | path; a
// credit-driven QP shares one controller among its paths and uses path 0.

// creditAsk announces bytes more of backlog (frame bytes, retransmissions
// included) to the receiver of a credit-driven QP.
func (qp *QP) creditAsk(bytes int64) {
	if bytes <= 0 || !qp.creditDriven() || qp.state != StateRTS {
		return
	}
	qp.sendCredit(metaroce.OpCreditReq, 0, bytes)
}

// framesBytes estimates the frame bytes of npkts packets carrying length
// bytes of data.
func (qp *QP) framesBytes(npkts int, length int) int64 {
	hdr := frameLen(!qp.nic.opts.IP.Is4(), wire.RETHLen, 0)
	if qp.mode == ModeMetaRoCE {
		hdr = frameLen(!qp.nic.opts.IP.Is4(), 0, metaroce.PlacementLen)
	}
	return int64(npkts*hdr + length)
}

// sendCredit sends a credit request or grant for flow.
func (qp *QP) sendCredit(op wire.Opcode, flow uint32, bytes int64) {
	n := qp.nic
	var buf [metaroce.CreditLen]byte
	p := qp.header(op, n.opts.CtrlDSCP, false, qp.pathPort(0, 0), 0)
	if op == metaroce.OpCreditGrant {
		qp.ctr.grantsTx++
	} else {
		qp.ctr.creditReqTx++
	}
	n.sendCtrl(n.finish(p, true, metaroce.AppendCredit(buf[:0], &metaroce.Credit{Flow: flow, Bytes: bytes}), nil, 0))
}

// onCredit handles a grant (for this QP's sender) or a request (for the
// NIC's receiver-driven controller).
func (qp *QP) onCredit(p *wire.Packet, op wire.Opcode) {
	var c metaroce.Credit
	if p.Raw == nil || metaroce.DecodeCredit(p.Payload(), &c) != nil {
		qp.ctr.rxDropped++
		return
	}
	if op == metaroce.OpCreditGrant {
		qp.ctr.grantsRx++
		if len(qp.req.paths) > 0 {
			qp.req.paths[0].cc.OnFeedback(cc.Feedback{Kind: cc.Credit, Bytes: c.Bytes})
			qp.nic.activate(qp)
		}
		return
	}
	qp.ctr.creditReqRx++
	if rx := qp.nic.creditReceiver(); rx != nil {
		qp.rsp.creditPeer = true
		rx.OnRequest(qp.qpn<<8|c.Flow&0xFF, c.Bytes)
	}
}

// creditData tells the NIC's credit receiver that a data frame of the
// credit-driven peer arrived.
func (qp *QP) creditData(p *wire.Packet) {
	if !qp.rsp.creditPeer {
		return
	}
	if rx := qp.nic.creditReceiver(); rx != nil {
		rx.OnData(qp.qpn<<8, p.Len, p.ECN == wire.ECNCE)
	}
}
