package compliance

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/cm"
)

// The CM cases' parameters: the IUT's Communication Manager waits
// cmTimeout for an answer and sends a message again cmRetries times; an
// answer that needs no timer is due within cmPrompt.
const (
	cmTimeout   = 500 * clock.Microsecond
	cmRetries   = 3
	cmPrompt    = 100 * clock.Microsecond
	cmPort      = 7471 // the rdma_cm port the IUT listens on
	cmOtherPort = 7472 // one it does not
	cmTesterSP  = 0xC0C1
	cmQKey      = 0x01234567 // the Q_Key of the IUT's UD service
)

// cmMRAWait is how long an MRA of service timeout st asks to wait.
func cmMRAWait(st uint8) clock.Duration { return 4096 * clock.Nanosecond << st }

// cmSpec is the IUT's CM configuration in every CM case.
var cmSpec = CMSpec{Timeout: cmTimeout, Retries: cmRetries}

// cmPeer is the tester's Communication Manager: MADs it builds and sends
// to the IUT's QP1, MADs it reads from the IUT's.
type cmPeer struct {
	t       *T
	ip      netip.Addr
	mac     [6]byte
	iutIP   netip.Addr
	iutMAC  [6]byte
	psn     uint32
	events  []CMEvent // every event the IUT's consumer reported so far
	nextTID uint64
}

// CMPeer learns the IUT's port address (from a QP it creates and
// destroys) and returns the tester's CM toward it.
func (t *T) CMPeer() *cmPeer {
	h, err := t.env.CreateQP(QPSpec{Mode: endpoint.ModeRoCEv2, Buffer: 4096})
	t.must(err, "adapter: create QP (the IUT's address)")
	t.must(t.env.Destroy(h.ID), "adapter: destroy QP")
	ip, mac := t.env.Peer()
	return &cmPeer{t: t, ip: ip, mac: mac, iutIP: h.Conn.IP, iutMAC: h.Conn.MAC, nextTID: 0x7E57_0000_0001}
}

// listen has the IUT listen on cmPort (its UD service with Q_Key cmQKey).
func (p *cmPeer) listen() {
	p.t.must(p.t.env.CMListen(CMListen{Spec: cmSpec, Port: cmPort, QKey: cmQKey}), "adapter: cm listen")
}

// connect has the IUT connect to the tester's port.
func (p *cmPeer) connect(port uint16) CMConnected {
	c, err := p.t.env.CMConnect(CMConnect{Spec: cmSpec, To: p.ip, Port: port})
	p.t.must(err, "adapter: cm connect")
	return c
}

// send sends msg with transaction ID tid to the IUT's QP1.
func (p *cmPeer) send(tid uint64, msg cm.Message) {
	mad := cm.AppendMAD(nil, tid, msg)
	b, err := cm.Frame(wire.Packet{SrcMAC: p.mac, DstMAC: p.iutMAC, SrcIP: p.ip, DstIP: p.iutIP, SrcPort: cmTesterSP,
		DstPort: wire.RoCEPort, DSCP: 26}, p.psn, mad)
	p.t.must(err, "build CM frame")
	p.psn++
	p.t.Logf("tester sends %s, TID %#x", msg.Attr(), tid)
	p.t.SendFrame(b)
}

// tid returns a fresh transaction ID.
func (p *cmPeer) tid() uint64 { p.nextTID++; return p.nextTID }

// mad is a CM MAD from the IUT.
type mad struct {
	At   clock.Time
	H    cm.Header
	Data []byte
}

// asMAD decodes in as a CM MAD to the tester's QP1 (nil: it is not one).
// A datagram to QP1 with another Q_Key, or whose MAD does not decode, fails the case.
func (p *cmPeer) asMAD(in *In) *mad {
	if in.P.Kind != wire.KindRoCE || wire.Opcode(in.P.Opcode) != wire.OpUDSendOnly || in.P.DestQP != cm.GSI {
		return nil
	}
	if qkey, src := in.P.DETH(); qkey != cm.QKeyGSI || src != cm.GSI {
		p.t.Errorf("CM datagram with DETH Q_Key %#x source QP %d, want %#x from QP1", qkey, src, uint32(cm.QKeyGSI))
	}
	m := &mad{At: in.At}
	d, err := cm.DecodeHeader(in.P.Payload(), &m.H)
	if err != nil {
		p.t.Errorf("datagram to QP1 is not a CM MAD: %v", err)
		return nil
	}
	m.Data = d
	return m
}

// expect waits up to d (plus the Env's jitter) for a MAD of attribute a,
// skipping other frames; it fails the case when none comes.
func (p *cmPeer) expect(d clock.Duration, a cm.AttrID) *mad {
	var m *mad
	p.t.Expect(d, a.String(), func(in *In) bool {
		m = p.asMAD(in)
		return m != nil && m.H.Attr == a
	})
	p.t.Logf("IUT sent %s, TID %#x", a, m.H.TID)
	return m
}

// collect returns the MADs the IUT sends within d.
func (p *cmPeer) collect(d clock.Duration) []*mad {
	var out []*mad
	for _, in := range p.t.Collect(d) {
		if m := p.asMAD(in); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// quiet fails the case if the IUT sends a MAD of attribute a within d.
func (p *cmPeer) quiet(d clock.Duration, a cm.AttrID, why string) {
	for _, m := range p.collect(d) {
		if m.H.Attr == a {
			p.t.Errorf("%s: the IUT sent %s (TID %#x), want none", why, a, m.H.TID)
		}
	}
}

// poll adds the IUT's new events to p.events.
func (p *cmPeer) poll() {
	ev, err := p.t.env.CMEvents()
	p.t.must(err, "adapter: cm events")
	for _, e := range ev {
		p.t.Logf("IUT event %s id %d qpn %#x reason %d", e.Kind, e.ID, e.QPN, e.Reason)
	}
	p.events = append(p.events, ev...)
}

// count is how many events of kind the IUT reported so far.
func (p *cmPeer) count(kind string) int {
	n := 0
	for _, e := range p.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// waitEvent waits up to d (plus the Env's jitter) for an event of kind and
// returns it; it fails the case when none comes.
func (p *cmPeer) waitEvent(d clock.Duration, kind string) CMEvent {
	end := p.t.Now().Add(d + p.t.Jitter())
	for {
		p.poll()
		for _, e := range p.events {
			if e.Kind == kind {
				return e
			}
		}
		if p.t.Now() >= end {
			p.t.Fatalf("no %s event from the IUT's consumer within %v (events %+v)", kind, d, p.events)
		}
		p.t.Collect(min(10*clock.Microsecond, end.Sub(p.t.Now())))
	}
}

// req is the REQ the tester sends for rdma_cm port port.
func (p *cmPeer) req(localID uint32, port uint16) *cm.REQ {
	return &cm.REQ{LocalCommID: localID, ServiceID: cm.ServiceID(cm.PortSpaceTCP, port), LocalCAGUID: 0x0252_4cff_fee0_0002,
		LocalQPN: testerQPN, StartingPSN: 0x1000, ResponderResources: 1, InitiatorDepth: 1, RemoteCMResponseTimeout: 20,
		LocalCMResponseTimeout: 20, RetryCount: 7, RNRRetryCount: 7, PKey: 0xFFFF, PathMTU: 5, MaxCMRetries: 15,
		Primary: cm.Path{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: cm.GID(p.ip), RemoteGID: cm.GID(p.iutIP), HopLimit: 64},
		Private: cm.AppendIPPrivate(nil, cm.IPPrivate{SrcPort: 0xBEEF, Src: p.ip, Dst: p.iutIP}, nil)}
}

// rep decodes m as a REP.
func (p *cmPeer) rep(m *mad) *cm.REP {
	var r cm.REP
	p.t.must(cm.DecodeREP(m.Data, &r), "decode REP")
	return &r
}

// accepted sends a REQ for cmPort and returns the IUT's REP.
func (p *cmPeer) accepted(localID uint32, tid uint64) *cm.REP {
	p.send(tid, p.req(localID, cmPort))
	return p.rep(p.expect(cmPrompt, cm.AttrREP))
}

// established makes a connection with the IUT (REQ, REP, RTU) and returns
// its REP.
func (p *cmPeer) established(localID uint32) *cm.REP {
	tid := p.tid()
	rep := p.accepted(localID, tid)
	p.send(tid, &cm.RTU{LocalCommID: localID, RemoteCommID: rep.LocalCommID})
	p.waitEvent(cmPrompt, "established")
	return rep
}

// ids is a message's pair of communication IDs, for messages.
func ids(local, remote uint32) string { return fmt.Sprintf("local %#x remote %#x", local, remote) }
