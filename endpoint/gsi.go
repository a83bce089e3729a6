package endpoint

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocelab/rocelab/endpoint/connmgr"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/cm"
)

// gsi is the NIC's QP1, the general services QP: the UD datagrams to it
// carry Communication Manager MADs, which its manager takes.
type gsi struct {
	cm  *connmgr.Manager
	psn uint32
	// bad counts datagrams to QP1 that were not CM MADs it could read.
	bad int64
}

// StartCM gives the NIC a Communication Manager on its QP1 and returns it
// (the one it has, if it has one already: cfg is then ignored). cfg gives
// the manager's events, timeout and retries; the NIC fills in its clock,
// address, GUID and how MADs leave. CM MADs always travel as bytes, also
// in a simulation without them, so that a capture shows the handshake.
func (n *NIC) StartCM(cfg connmgr.Config) *connmgr.Manager {
	if n.gsi.cm == nil {
		mac := n.opts.MAC
		cfg.Sched, cfg.Local, cfg.Send = n.sched, n.opts.IP, n.sendMAD
		cfg.GUID = binary.BigEndian.Uint64([]byte{mac[0] ^ 2, mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]}) // EUI-64
		cfg.Defects = n.cmDefects()
		n.gsi.cm = connmgr.New(cfg)
	}
	return n.gsi.cm
}

// CM returns the NIC's Communication Manager (nil before StartCM).
func (n *NIC) CM() *connmgr.Manager { return n.gsi.cm }

// cmMutants are the NIC's mutants that are defects of its CM.
var cmMutants = [...]struct {
	m Mutant
	d connmgr.Defect
}{
	{MutCMDropUnknownREQ, connmgr.DefectDropUnknownREQ}, {MutCMNoREQRetry, connmgr.DefectNoREQRetry},
	{MutCMNoREPRetry, connmgr.DefectNoREPRetry}, {MutCMDupREQNew, connmgr.DefectDupREQNew},
	{MutCMREPWrongRemoteID, connmgr.DefectREPWrongRemoteID}, {MutCMIgnoreMRA, connmgr.DefectIgnoreMRA},
	{MutCMNoDREP, connmgr.DefectNoDREP}, {MutCMSIDRWrongStatus, connmgr.DefectSIDRWrongStatus},
}

// cmDefects are the CM defects of the NIC's mutants (none in a build
// without them: mut is then a constant false).
func (n *NIC) cmDefects() connmgr.Defect {
	var d connmgr.Defect
	for _, c := range cmMutants {
		if n.mut(c.m) {
			d |= c.d
		}
	}
	return d
}

// sendMAD sends mad to the QP1 of the port at to, ahead of data.
func (n *NIC) sendMAD(to netip.Addr, mad []byte) {
	p := n.newPacket()
	*p = wire.Packet{Kind: wire.KindRoCE, SrcMAC: n.opts.MAC, EtherType: wire.EtherTypeIPv4, IPVersion: 4,
		SrcIP: n.opts.IP, DstIP: to, DSCP: n.opts.DataDSCP, TTL: wire.DefaultTTL, Protocol: wire.ProtoUDP,
		SrcPort: udpSourcePort(cm.GSI), DstPort: wire.RoCEPort, Opcode: uint8(wire.OpUDSendOnly),
		BTHControl: wire.BTHControl{PKey: wire.DefaultPKey}, DestQP: cm.GSI, PSN: n.gsi.psn}
	if !n.opts.IP.Is4() {
		p.IPVersion, p.EtherType = 6, wire.EtherTypeIPv6
	}
	n.gsi.psn = (n.gsi.psn + 1) & psnMask
	p.SetDETH(cm.QKeyGSI, cm.GSI)
	n.sendCtrl(n.finish(p, true, nil, mad, len(mad)))
}

// receiveMAD hands a datagram to QP1 to the NIC's manager (none: dropped,
// as a port without a CM agent drops them).
func (n *NIC) receiveMAD(p *wire.Packet) {
	if n.gsi.cm == nil || wire.Opcode(p.Opcode) != wire.OpUDSendOnly {
		n.ctr.noQP++
		return
	}
	if qkey, _ := p.DETH(); qkey != cm.QKeyGSI {
		n.gsi.bad++
		return
	}
	if err := n.gsi.cm.Receive(p.SrcIP, p.Payload()); err != nil {
		n.gsi.bad++
	}
}
