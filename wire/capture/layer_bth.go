package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// BTH is the RoCEv2 base transport header, as a gopacket layer.
//
//	 0               1               2               3
//	+---------------+-+-+---+-------+-------------------------------+
//	|    OpCode     |S|M|Pad| TVer  |            P_Key              |
//	+-+-+-----------+-+-+---+-------+-------------------------------+
//	|F|B|   resv6   |              Destination QP                   |
//	+-+-------------+-----------------------------------------------+
//	|A|    resv7    |         Packet Sequence Number                |
//	+-+-------------+-----------------------------------------------+
//
// The BTH owns the packet's trailer: decoding strips the pad (PadCnt bytes)
// and the 4-byte ICRC from its payload, so the layers after it see exactly
// the extension headers and the RDMA payload; serializing appends them.
type BTH struct {
	layers.BaseLayer
	Opcode wire.Opcode
	wire.BTHControl
	DestQP uint32 // 24 bits
	AckReq bool
	PSN    uint32 // 24 bits
	// ICRC is the invariant CRC the packet carries (decoding), or the value
	// SerializeTo writes; [SealICRC] computes the right one once the whole
	// frame is serialized.
	ICRC uint32
}

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the first extension header the opcode carries, or
// the payload. (The one opcode with two, RDMA WRITE Only with Immediate,
// is followed by RETH then ImmDt; gopacket.NewPacket decodes both, while a
// DecodingLayerParser leaves the ImmDt as the first 4 payload bytes: use
// Packet.Decode on hot paths.)
func (b *BTH) NextLayerType() gopacket.LayerType {
	ext := b.Opcode.Ext()
	switch {
	case ext&wire.ExtDETH != 0:
		return LayerTypeDETH
	case ext&wire.ExtRETH != 0:
		return LayerTypeRETH
	case ext&wire.ExtAtomicETH != 0:
		return LayerTypeAtomicETH
	case ext&wire.ExtAETH != 0:
		return LayerTypeAETH
	case ext&wire.ExtImmDt != 0:
		return LayerTypeImmDt
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes data, a UDP payload starting with the BTH and
// ending with the ICRC.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < wire.BTHLen+wire.ICRCLen {
		df.SetTruncated()
		return truncated("BTH", 0, wire.BTHLen+wire.ICRCLen, len(data))
	}
	var p wire.Packet // the descriptor's decoder owns the bit layout
	p.DecodeBTH(data)
	b.Opcode, b.BTHControl = wire.Opcode(p.Opcode), p.BTHControl
	b.DestQP, b.AckReq, b.PSN = p.DestQP, p.AckReq, p.PSN
	end := len(data) - wire.ICRCLen - int(b.PadCnt)
	if end < wire.BTHLen {
		return malformed("BTH", 0, "pad count exceeds the payload")
	}
	b.ICRC = binary.LittleEndian.Uint32(data[len(data)-wire.ICRCLen:])
	b.Contents = data[:wire.BTHLen]
	b.Payload = data[wire.BTHLen:end]
	return nil
}

// SerializeTo prepends the BTH and appends the pad and the ICRC field.
// With opts.FixLengths, PadCnt is set to pad what follows the BTH to a
// multiple of 4 bytes.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if b.DestQP > 0xFFFFFF || b.PSN > 0xFFFFFF || b.TVer > 15 || b.PadCnt > 3 {
		return invalid("BTH: DestQP %#x, PSN %#x, TVer %d or PadCnt %d out of range", b.DestQP, b.PSN, b.TVer, b.PadCnt)
	}
	if opts.FixLengths {
		b.PadCnt = uint8((4 - len(buf.Bytes())%4) % 4)
	}
	tail, err := buf.AppendBytes(int(b.PadCnt) + wire.ICRCLen)
	if err != nil {
		return err
	}
	clear(tail)
	binary.LittleEndian.PutUint32(tail[b.PadCnt:], b.ICRC)
	h, err := buf.PrependBytes(wire.BTHLen)
	if err != nil {
		return err
	}
	spec := wire.Packet{BTHControl: b.BTHControl, DestQP: b.DestQP, AckReq: b.AckReq, PSN: b.PSN}
	wire.PutBTH(h, b.Opcode, &spec, b.PadCnt)
	return nil
}

// decodeBTH decodes the BTH and the extension headers its opcode carries,
// then hands the rest to the payload decoder.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{}
	if err := decodeInto(b, data, p); err != nil {
		return err
	}
	rest := b.Payload
	ext := b.Opcode.Ext()
	if ext&wire.ExtDETH != 0 {
		d := &DETH{}
		if err := decodeInto(d, rest, p); err != nil {
			return err
		}
		if ext&wire.ExtImmDt != 0 {
			d.next = LayerTypeImmDt
		}
		rest = d.Payload
	}
	if ext&wire.ExtRETH != 0 {
		r := &RETH{}
		if err := decodeInto(r, rest, p); err != nil {
			return err
		}
		if ext&wire.ExtImmDt != 0 {
			r.next = LayerTypeImmDt
		}
		rest = r.Payload
	}
	if ext&wire.ExtAtomicETH != 0 {
		a := &AtomicETH{}
		if err := decodeInto(a, rest, p); err != nil {
			return err
		}
		rest = a.Payload
	}
	if ext&wire.ExtAETH != 0 {
		a := &AETH{}
		if err := decodeInto(a, rest, p); err != nil {
			return err
		}
		if ext&wire.ExtAtomicAckETH != 0 {
			a.next = LayerTypeAtomicAckETH
		}
		rest = a.Payload
	}
	if ext&wire.ExtAtomicAckETH != 0 {
		a := &AtomicAckETH{}
		if err := decodeInto(a, rest, p); err != nil {
			return err
		}
		rest = a.Payload
	}
	if ext&wire.ExtImmDt != 0 {
		if err := decodeInto(&ImmDt{}, rest, p); err != nil {
			return err
		}
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}
