package compliance

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// ConnOpts says how a case connects the tester's QP to a new IUT QP.
type ConnOpts struct {
	Mode    endpoint.Mode // the IUT QP's mode
	Paths   int           // the IUT QP's paths (MetaRoCE)
	NoOffer bool          // the tester offers no METAROCE in its ConnInfo
	Silent  bool          // the tester does not answer the IUT's HELLO
	MTU     int           // the tester's MTU (default 4096)
	PSN     uint32        // the tester's initial PSN (default 0xFFFFF0: sequences wrap)
	HasPSN  bool
	Buffer  int // the IUT QP's buffer (default 1 MiB)
	// IUTPSN, if HasIUTPSN, is the IUT's first PSN (default: its own
	// random choice).
	IUTPSN    uint32
	HasIUTPSN bool
	// NoRemoteAtomic registers the IUT's buffer without remote-atomic
	// access.
	NoRemoteAtomic bool
}

// Conn is the tester's end of a connection: a QP that exists only in the
// frames the tester builds.
type Conn struct {
	t     *T
	QP    QPHandle // the IUT's QP
	QPN   uint32   // the tester's QPN
	PSN   uint32   // the next PSN the tester sends as requester
	RPSN  uint32   // the IUT's initial PSN
	MTU   int      // the path MTU
	Meta  bool     // MetaRoCE agreed
	SPort uint16   // the tester's UDP source port
	MSN   uint32   // messages the tester completed as responder
	Hello *In      // the IUT's first HELLO (MetaRoCE)
}

// Tester's fixed QP number and source port.
const (
	testerQPN   = 0x4242
	testerSPort = 0xD00D
	helloWait   = 50 * clock.Microsecond
)

// Connect creates a QP on the IUT and connects the tester to it; for a
// MetaRoCE IUT QP offered METAROCE it answers the IUT's HELLO (unless
// Silent) so that both ends run MetaRoCE.
func (t *T) Connect(o ConnOpts) *Conn {
	if o.Buffer == 0 {
		o.Buffer = 1 << 20
	}
	if o.MTU == 0 {
		o.MTU = 4096
	}
	if !o.HasPSN {
		o.PSN = 0xFFFFF0
	}
	spec := QPSpec{Mode: o.Mode, Paths: o.Paths, Buffer: o.Buffer, NoRemoteAtomic: o.NoRemoteAtomic}
	if o.HasIUTPSN {
		spec.PSN = &o.IUTPSN
	}
	h, err := t.env.CreateQP(spec)
	t.must(err, "adapter: create QP")
	ip, mac := t.env.Peer()
	c := &Conn{t: t, QP: h, QPN: testerQPN, PSN: o.PSN, RPSN: h.Conn.PSN, MTU: min(o.MTU, max(h.Conn.MTU, 256)), SPort: testerSPort}
	if h.Conn.MTU == 0 {
		c.MTU = o.MTU
	}
	mine := endpoint.ConnInfo{QPN: c.QPN, PSN: o.PSN, IP: ip, MAC: mac, MTU: o.MTU, Mode: endpoint.ModeRoCEv2, Paths: 1}
	offer := o.Mode == endpoint.ModeMetaRoCE && !o.NoOffer
	if offer {
		mine.Mode = endpoint.ModeMetaRoCE
		mine.Caps = metaroce.CapMetaRoCE | metaroce.CapTrim | metaroce.CapMultipath
	}
	t.must(t.env.Connect(h.ID, mine), "adapter: connect")
	if !offer {
		return c
	}
	c.Hello, _ = t.Expect(helloWait, "HELLO from the MetaRoCE IUT QP", func(in *In) bool { return in.P.Opcode == uint8(metaroce.OpHello) })
	if o.Silent {
		return c
	}
	c.SendHello(metaroce.OpHelloAck)
	c.Meta = true
	return c
}

// hdr is a RoCEv2 packet from the tester's QP to the IUT's.
func (c *Conn) hdr(op wire.Opcode, psn uint32, dscp uint8, ect bool) *wire.Packet {
	ip, mac := c.t.env.Peer()
	p := &wire.Packet{Kind: wire.KindRoCE, SrcMAC: mac, DstMAC: c.QP.Conn.MAC, SrcIP: ip, DstIP: c.QP.Conn.IP,
		DSCP: dscp, SrcPort: c.SPort, DstPort: wire.RoCEPort, Opcode: uint8(op), BTHControl: wire.BTHControl{PKey: wire.DefaultPKey},
		DestQP: c.QP.Conn.QPN, PSN: psn & 0xFFFFFF}
	if ect {
		p.ECN = wire.ECNECT0
	}
	return p
}

// Req is a request packet (data DSCP, ECT(0)) with opcode op at psn.
func (c *Conn) Req(op wire.Opcode, psn uint32) *wire.Packet { return c.hdr(op, psn, 26, true) }

// Write sends a WRITE Only of data to va at psn.
func (c *Conn) Write(psn uint32, va uint64, rkey uint32, data []byte, ackReq bool) {
	p := c.Req(wire.OpWriteOnly, psn)
	p.VA, p.RKey, p.DMALen, p.AckReq = va, rkey, uint32(len(data)), ackReq
	c.t.Send(p, data)
}

// Data sends a MetaRoCE DATA packet (opcode 0xE0 | rc) with placement h.
func (c *Conn) Data(rc wire.Opcode, psn uint32, h metaroce.Placement, data []byte, ackReq bool) *wire.Packet {
	p := c.Req(metaroce.OpDataBase|rc, psn)
	p.AckReq = ackReq
	c.t.Send(p, append(metaroce.AppendPlacement(nil, &h), data...))
	return p
}

// MetaWrite sends one MetaRoCE WRITE Only packet of data to va.
func (c *Conn) MetaWrite(psn uint32, va uint64, data []byte, ackReq bool) {
	h := metaroce.Placement{Flags: metaroce.PlaceFirst | metaroce.PlaceLast, Addr: va, RKey: c.QP.Buf.RKey, MsgLen: uint32(len(data))}
	c.Data(wire.OpWriteOnly, psn, h, data, ackReq)
}

// Ack sends an RC Acknowledge with syndrome syn for psn.
func (c *Conn) Ack(psn uint32, syn uint8) {
	p := c.hdr(wire.OpAcknowledge, psn, 26, false)
	p.Syndrome, p.MSN = syn, c.MSN&0xFFFFFF
	c.t.Send(p, nil)
}

// SACK sends a SACK with cumulative PSN cum, trigger and flags; got are
// PSNs past the hole that arrived.
func (c *Conn) SACK(cum, trigger uint32, flags uint8, got ...uint32) {
	s := metaroce.SACK{Flags: flags, Trigger: trigger & 0xFFFFFF, MSN: c.MSN}
	for _, g := range got {
		i := int((g - cum - 2) & 0xFFFFFF)
		if i < 32*metaroce.MaxSACKWords {
			s.Bitmap[i/32] |= 1 << uint(i%32)
			s.Words = max(s.Words, i/32+1)
		}
	}
	p := c.hdr(metaroce.OpSACK, cum, 26, false)
	c.t.Send(p, metaroce.AppendSACK(nil, &s))
}

// SendHello sends HELLO or HELLO-ACK offering MetaRoCE.
func (c *Conn) SendHello(op wire.Opcode) {
	h := metaroce.Hello{Version: metaroce.HelloVersion, Paths: 1, Caps: metaroce.CapMetaRoCE | metaroce.CapTrim | metaroce.CapMultipath}
	p := c.hdr(op, c.PSN, 48, false)
	c.t.Send(p, metaroce.AppendHello(nil, &h))
}

// Mine reports whether in is addressed to the tester's QP.
func (c *Conn) Mine(in *In) bool { return in.P.DestQP == c.QPN }

// mineOp returns a test for a frame with BTH opcode op addressed to the
// tester's QP.
func (c *Conn) mineOp(op wire.Opcode) func(*In) bool {
	isOp := IsOp(op)
	return func(in *In) bool { return isOp(in) && c.Mine(in) }
}

// mineOf returns the frames among ins with BTH opcode op addressed to the
// tester's QP.
func (c *Conn) mineOf(op wire.Opcode, ins []*In) []*In {
	mine := c.mineOp(op)
	var out []*In
	for _, in := range ins {
		if mine(in) {
			out = append(out, in)
		}
	}
	return out
}

// IsRequest reports whether in is a request from the IUT's requester
// (RC SEND/WRITE/READ request, or MetaRoCE DATA that is not a READ
// response).
func IsRequest(in *In) bool {
	op := wire.Opcode(in.P.Opcode)
	return in.P.Kind == wire.KindRoCE && (op <= wire.OpReadRequest || op >= metaroce.OpDataBase && op < metaroce.OpDataBase|wire.OpReadResponseFirst)
}

// IsOp reports whether in has BTH opcode op.
func IsOp(op wire.Opcode) func(*In) bool {
	return func(in *In) bool {
		return (in.P.Kind == wire.KindRoCE || in.P.Kind == wire.KindCNP) && in.P.Opcode == uint8(op)
	}
}

// SACKOf decodes the SACK in in.
func (t *T) SACKOf(in *In) metaroce.SACK {
	var s metaroce.SACK
	if err := metaroce.DecodeSACK(in.P.Payload(), &s); err != nil {
		t.Fatalf("SACK from the IUT does not decode: %v", err)
	}
	return s
}

// PlacementOf decodes the Placement header of a MetaRoCE DATA packet.
func (t *T) PlacementOf(in *In) (metaroce.Placement, []byte) {
	var h metaroce.Placement
	rest, err := metaroce.DecodePlacement(in.P.Payload(), &h)
	if err != nil {
		t.Fatalf("DATA from the IUT: placement header: %v", err)
	}
	return h, rest
}

// Post posts wr on the IUT QP.
func (c *Conn) Post(wr WR) {
	c.t.must(c.t.env.PostSend(c.QP.ID, wr), "adapter: post send")
}

// PostRecv posts a receive buffer of length bytes at offset.
func (c *Conn) PostRecv(wrid, offset uint64, length uint32) {
	c.t.must(c.t.env.PostRecv(c.QP.ID, wrid, offset, length), "adapter: post recv")
}

// Poll returns the IUT QP's completions.
func (c *Conn) Poll() []Completion {
	wcs, err := c.t.env.Poll(c.QP.ID)
	c.t.must(err, "adapter: poll")
	return wcs
}

// WaitCompletion waits up to d (plus the Env's jitter) for a completion
// of the IUT QP, answering nothing on the wire meanwhile; frames seen are
// returned.
func (c *Conn) WaitCompletion(d clock.Duration) (*Completion, []*In) {
	end := c.t.Now().Add(d + c.t.Jitter())
	var seen []*In
	for {
		if wcs := c.Poll(); len(wcs) > 0 {
			return &wcs[0], seen
		}
		left := end.Sub(c.t.Now())
		if left <= 0 {
			return nil, seen
		}
		seen = append(seen, c.t.Collect(min(left, 20*clock.Microsecond))...)
	}
}

// State returns the IUT QP's state.
func (c *Conn) State() QPStatus {
	st, err := c.t.env.Query(c.QP.ID)
	c.t.must(err, "adapter: query")
	return st
}

// Mem reads n bytes of the IUT QP's buffer at offset.
func (c *Conn) Mem(offset uint64, n int) []byte {
	b, err := c.t.env.ReadMem(c.QP.ID, offset, n)
	c.t.must(err, "adapter: read buffer")
	return b
}

// Fill writes data into the IUT QP's buffer at offset.
func (c *Conn) Fill(offset uint64, data []byte) {
	c.t.must(c.t.env.WriteMem(c.QP.ID, offset, data), "adapter: write buffer")
}

// pattern returns n bytes of a recognisable pattern seeded by s.
func pattern(n int, s byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ s
	}
	return b
}

// psnAdd adds d to a 24-bit PSN.
func psnAdd(psn uint32, d int) uint32 { return uint32(int64(psn)+int64(d)) & 0xFFFFFF }
