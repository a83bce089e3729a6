package connmgr

import (
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire/cm"
)

// Receive handles mad, a MAD that arrived on QP1 from the port at from.
// It returns an error for a MAD that is not a CM message it can read;
// a message for no connection it has is answered as IBTA says (a REQ for
// a service nobody listens on gets a REJ) or dropped.
func (m *Manager) Receive(from netip.Addr, mad []byte) error {
	var h cm.Header
	d, err := cm.DecodeHeader(mad, &h)
	if err != nil {
		return err
	}
	switch h.Attr {
	case cm.AttrREQ:
		var req cm.REQ
		if err := cm.DecodeREQ(d, &req); err != nil {
			return err
		}
		m.onREQ(from, h.TID, &req)
	case cm.AttrREP:
		var rep cm.REP
		if err := cm.DecodeREP(d, &rep); err != nil {
			return err
		}
		m.onREP(from, &rep)
	case cm.AttrRTU:
		var rtu cm.RTU
		if err := cm.DecodeRTU(d, &rtu); err != nil {
			return err
		}
		if c := m.conns[rtu.RemoteCommID]; c != nil && c.st == repSent && c.peer == from {
			m.stop(c)
			c.st = established
			m.event(Event{Kind: Established, ID: c.id, Peer: from})
		}
	case cm.AttrREJ:
		var rej cm.REJ
		if err := cm.DecodeREJ(d, &rej); err != nil {
			return err
		}
		if c := m.conns[rej.RemoteCommID]; c != nil && (c.st == reqSent || c.st == repSent) && c.peer == from {
			m.drop(c)
			m.event(Event{Kind: Rejected, ID: c.id, Peer: from, Reason: rej.Reason, Remote: Params{Private: rej.Private}})
		}
	case cm.AttrMRA:
		var mra cm.MRA
		if err := cm.DecodeMRA(d, &mra); err != nil {
			return err
		}
		// The peer needs longer: the wait starts again, its service
		// timeout longer, retries anew.
		if c := m.conns[mra.RemoteCommID]; c != nil && c.timer != nil && !m.defect(DefectIgnoreMRA) && c.peer == from && (c.st == reqSent || c.st == repSent) {
			m.stop(c)
			c.tries = 0
			wait := 4096 * clock.Nanosecond << min(mra.ServiceTimeout, 31)
			c.timer = m.cfg.Sched.AfterFunc(wait+m.cfg.Timeout, func() { m.timeout(c) })
		}
	case cm.AttrDREQ:
		var dreq cm.DREQ
		if err := cm.DecodeDREQ(d, &dreq); err != nil {
			return err
		}
		if !m.defect(DefectNoDREP) {
			m.reply(from, h.TID, &cm.DREP{LocalCommID: dreq.RemoteCommID, RemoteCommID: dreq.LocalCommID})
		}
		if c := m.conns[dreq.RemoteCommID]; c != nil && (c.st == established || c.st == dreqSent || c.st == repSent) && c.peer == from {
			m.drop(c)
			if !c.quiet {
				m.event(Event{Kind: Disconnected, ID: c.id, Peer: from})
			}
		}
	case cm.AttrDREP:
		var drep cm.DREP
		if err := cm.DecodeDREP(d, &drep); err != nil {
			return err
		}
		if c := m.conns[drep.RemoteCommID]; c != nil && c.st == dreqSent && c.peer == from {
			m.drop(c)
			if !c.quiet {
				m.event(Event{Kind: Disconnected, ID: c.id, Peer: from})
			}
		}
	case cm.AttrSIDRREQ:
		var req cm.SIDRREQ
		if err := cm.DecodeSIDRREQ(d, &req); err != nil {
			return err
		}
		m.onSIDRREQ(from, h.TID, &req)
	case cm.AttrSIDRREP:
		var rep cm.SIDRREP
		if err := cm.DecodeSIDRREP(d, &rep); err != nil {
			return err
		}
		if c := m.conns[rep.RequestID]; c != nil && c.st == sidrSent && c.peer == from {
			m.drop(c)
			if rep.Status != cm.SIDRValid {
				m.event(Event{Kind: Rejected, ID: c.id, Peer: from, Reason: uint16(rep.Status), UD: true, Remote: Params{Private: rep.Private}})
				return nil
			}
			m.event(Event{Kind: Established, ID: c.id, Peer: from, UD: true,
				Remote: Params{ServiceID: rep.ServiceID, QPN: rep.QPN, QKey: rep.QKey, Private: rep.Private}})
		}
	}
	return nil
}

// onREQ takes a connection request: a new one reaches the consumer, one
// whose REQ was sent again is answered as the first was, and one for a
// service nobody listens on is rejected.
func (m *Manager) onREQ(from netip.Addr, tid uint64, req *cm.REQ) {
	if c := m.byRemote[remoteKey{from, req.LocalCommID}]; c != nil && !m.defect(DefectDupREQNew) {
		if c.st == repSent {
			m.cfg.Send(from, c.last) // our REP was lost
		}
		return
	}
	if !m.listening[req.ServiceID] {
		if m.defect(DefectDropUnknownREQ) {
			return
		}
		m.reply(from, tid, &cm.REJ{RemoteCommID: req.LocalCommID, Reason: cm.RejectInvalidServiceID})
		return
	}
	c := m.add(from)
	c.st, c.tid, c.remoteID, c.remoteQPN = reqRcvd, tid, req.LocalCommID, req.LocalQPN
	m.byRemote[remoteKey{from, c.remoteID}] = c
	m.event(Event{Kind: ConnectRequest, ID: c.id, Peer: from, Remote: Params{ServiceID: req.ServiceID, QPN: req.LocalQPN,
		PSN: req.StartingPSN, ResponderResources: req.ResponderResources, InitiatorDepth: req.InitiatorDepth,
		RetryCount: req.RetryCount, RNRRetryCount: req.RNRRetryCount, PathMTU: req.PathMTU, Private: req.Private}})
}

// onSIDRREQ takes a UD service request: a new one reaches the consumer,
// one sent again is answered as the first was (or waits for the
// consumer), one for a service nobody listens on is refused.
func (m *Manager) onSIDRREQ(from netip.Addr, tid uint64, req *cm.SIDRREQ) {
	if c := m.byRemote[remoteKey{from, req.RequestID}]; c != nil {
		if c.st == sidrAnswered {
			m.cfg.Send(from, c.last)
		}
		return
	}
	if !m.listening[req.ServiceID] {
		status := uint8(cm.SIDRNoService)
		if m.defect(DefectSIDRWrongStatus) {
			status = cm.SIDRRejected
		}
		m.reply(from, tid, &cm.SIDRREP{RequestID: req.RequestID, Status: status, ServiceID: req.ServiceID})
		return
	}
	c := m.add(from)
	c.st, c.remoteID, c.tid, c.serviceID = sidrRcvd, req.RequestID, tid, req.ServiceID
	m.byRemote[remoteKey{from, c.remoteID}] = c
	m.event(Event{Kind: ConnectRequest, ID: c.id, Peer: from, UD: true, Remote: Params{ServiceID: req.ServiceID, Private: req.Private}})
}

// onREP hands an active connection's REP to the consumer (Replied), who
// Confirms it (RTU). A REP sent again (the RTU was lost) gets the RTU
// again; one that comes while the consumer readies its QP waits for it.
func (m *Manager) onREP(from netip.Addr, rep *cm.REP) {
	c := m.conns[rep.RemoteCommID]
	if c == nil || c.peer != from {
		return
	}
	switch c.st {
	case established:
		m.cfg.Send(from, c.last)
	case reqSent:
		m.stop(c)
		c.st, c.remoteID, c.remoteQPN = repRcvd, rep.LocalCommID, rep.LocalQPN
		m.event(Event{Kind: Replied, ID: c.id, Peer: from, Remote: Params{QPN: rep.LocalQPN, PSN: rep.StartingPSN,
			ResponderResources: rep.ResponderResources, InitiatorDepth: rep.InitiatorDepth, RNRRetryCount: rep.RNRRetryCount,
			Private: rep.Private}})
	}
}
