package endpoint

import (
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// In payload-free simulation a data packet has no bytes; the Placement
// header then travels in descriptor fields: Addr in VA, RKey in RKey,
// MsgLen in DMALen, MsgSeq in MSN (24 bits), Flags in Syndrome, Imm in Imm.
func placementToDesc(p *wire.Packet, h *metaroce.Placement) {
	p.VA, p.RKey, p.DMALen, p.MSN, p.Syndrome = h.Addr, h.RKey, h.MsgLen, h.MsgSeq&psnMask, h.Flags
	p.HasImm, p.Imm = h.Flags&metaroce.PlaceImm != 0, h.Imm
}

func placementFromDesc(p *wire.Packet, h *metaroce.Placement) {
	*h = metaroce.Placement{Flags: p.Syndrome, MsgSeq: p.MSN, Addr: p.VA, RKey: p.RKey, MsgLen: p.DMALen, Imm: p.Imm}
}

// psnMask keeps the 24 bits of a PSN.
const psnMask = 0xFFFFFF

// psnDiff returns a−b as a signed distance in the 24-bit PSN space.
func psnDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// unwrap turns a 24-bit PSN into the 64-bit sequence number nearest ref
// (ref is a sequence number, whose low 24 bits are a PSN).
func unwrap(psn uint32, ref uint64) uint64 {
	return uint64(int64(ref) + int64(psnDiff(psn&psnMask, uint32(ref)&psnMask)))
}

// unwrap is unwrap, or with MutPSNNoWrap the distance taken without the
// wrap (a mutant only the compliance suite's PSN-wrap cases catch).
func (n *NIC) unwrap(psn uint32, ref uint64) uint64 {
	if n.mut(MutPSNNoWrap) {
		return uint64(int64(ref) + int64(psn&psnMask) - int64(uint32(ref)&psnMask))
	}
	return unwrap(psn, ref)
}
