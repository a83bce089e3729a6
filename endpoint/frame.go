package endpoint

import (
	"github.com/rocelab/rocelab/wire"
)

// header returns a RoCEv2 packet descriptor from qp to its peer with the
// addressing, DSCP and BTH fields every packet of qp shares.
func (qp *QP) header(op wire.Opcode, dscp uint8, ect bool, sport uint16, psn uint32) *wire.Packet {
	n := qp.nic
	p := n.newPacket()
	*p = wire.Packet{
		Kind:       wire.KindRoCE,
		DstMAC:     qp.remote.MAC,
		SrcMAC:     n.opts.MAC,
		EtherType:  wire.EtherTypeIPv4,
		IPVersion:  4,
		SrcIP:      n.opts.IP,
		DstIP:      qp.remote.IP,
		DSCP:       dscp,
		TTL:        wire.DefaultTTL,
		Protocol:   wire.ProtoUDP,
		SrcPort:    sport,
		DstPort:    wire.RoCEPort,
		Opcode:     uint8(op),
		BTHControl: wire.BTHControl{PKey: wire.DefaultPKey},
		DestQP:     qp.remote.QPN,
		PSN:        psn & psnMask,
	}
	if !n.opts.IP.Is4() {
		p.IPVersion, p.EtherType = 6, wire.EtherTypeIPv6
	}
	if ect && !n.mut(MutDataNotECT) {
		p.ECN = wire.ECNECT0
	}
	return p
}

// newPacket returns a descriptor for a packet the NIC builds: one a NIC
// received and is done with when its pool has one (Options.Descriptors),
// else a new one. A descriptor's life ends at the NIC that receives it;
// nothing downstream of Receive keeps it (MetaRoCE's out-of-order buffer
// keeps a copy). Reusing them spares the simulator an allocation per
// packet, and the one reused was given back last and is likely in cache.
// The caller overwrites every field.
func (n *NIC) newPacket() *wire.Packet {
	if p := n.spares.Get(); p != nil {
		return p
	}
	return new(wire.Packet)
}

// frameLen returns the length (FCS excluded) of a RoCEv2 frame whose BTH is
// followed by ext bytes of extension headers and body bytes of payload.
func frameLen(ipv6 bool, ext, body int) int {
	l := wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + ext + body + (4-body%4)%4 + wire.ICRCLen
	if ipv6 {
		l += wire.IPv6Len - wire.IPv4MinLen
	}
	return max(l, wire.MinFrameLen)
}

// finish completes p. With raw (or for MetaRoCE control packets, which
// always carry bytes) it builds the frame from p, pre (a MetaRoCE header)
// and data, and re-decodes it so that the descriptor is exactly what the
// emulation edge would hand the peer. Otherwise p carries lengths only:
// Len is the frame length and PayloadLen the data length (dataLen).
func (n *NIC) finish(p *wire.Packet, raw bool, pre, data []byte, dataLen int) *wire.Packet {
	op := wire.Opcode(p.Opcode)
	if !raw {
		p.Len = frameLen(p.IPVersion == 6, op.Ext().Len(), len(pre)+dataLen)
		p.PayloadLen = uint16(dataLen) // at most the MTU
		p.HasRETH = op.Ext()&wire.ExtRETH != 0
		p.HasAETH = op.Ext()&wire.ExtAETH != 0
		p.HasImm = p.HasImm || op.Ext()&wire.ExtImmDt != 0
		return p
	}
	body := data
	if len(pre) > 0 {
		n.buf = append(append(n.buf[:0], pre...), data...)
		body = n.buf
	} else if data == nil && dataLen > 0 {
		body = zeros(dataLen)
	}
	f, err := wire.AppendFrame(n.frameBuf(frameLen(p.IPVersion == 6, op.Ext().Len(), len(body))+n.opts.Tailroom), p, body)
	if err != nil {
		panic("endpoint: building a frame the NIC specified: " + err.Error())
	}
	if err := p.Decode(f); err != nil {
		panic("endpoint: decoding a frame the NIC built: " + err.Error())
	}
	return p
}

// frameBuf returns an empty buffer with room for a frame of size bytes:
// the last one the driver released (Release) if it is large enough, else
// a new one. A released buffer too small for the frame is dropped, so
// that a few short ones (a duplicated frame's copy has no room to spare)
// cannot keep the NIC from reusing the rest.
func (n *NIC) frameBuf(size int) []byte {
	if k := len(n.frames); k > 0 {
		b := n.frames[k-1]
		n.frames[k-1] = nil
		n.frames = n.frames[:k-1]
		if cap(b) >= size {
			return b[:0]
		}
	}
	return make([]byte, 0, size)
}

// framesCap bounds the buffers a NIC keeps for the frames it builds.
const framesCap = 256

// Release gives back a packet the NIC sent, once its driver is done with
// it: the emulation's port has written its frame. The NIC builds later
// frames in its bytes and reuses the descriptor (newPacket), so that a
// sending NIC takes no fresh memory per frame: in the emulation, fresh
// buffers were page faults on the node's loop at every workload's
// start (docs/performance.md). Release only what this NIC sent, once;
// nothing may touch it afterwards. The simulator releases nothing: its
// packets end at the receiving NIC (Receive).
func (n *NIC) Release(p *wire.Packet) {
	if cap(p.Raw) >= wire.MinFrameLen && len(n.frames) < framesCap {
		n.frames = append(n.frames, p.Raw[:0])
	}
	*p = wire.Packet{}
	n.spares.Put(p)
}

var zeroBuf = make([]byte, 9216)

func zeros(n int) []byte {
	if n <= len(zeroBuf) {
		return zeroBuf[:n]
	}
	return make([]byte, n)
}
