package faults

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// ECNOff models "ECN not configured" as seen by the switches downstream
// of a link direction: it rewrites the ECN field of every ECN-capable IP
// packet (ECT(0), ECT(1) and CE) to Not-ECT, so no switch after it can
// mark — and CE marks made before it are lost, as with an ECN-bleaching
// hop. Place it on the link into the switch whose marking should be off.
//
// It is not the same as a switch with marking disabled: a class with WRED
// DropNonECT would now drop instead of mark, and the receiver sees
// Not-ECT. To model the switch-side misconfiguration exactly, the lab
// applies switchmodel.Config.DisableECN through fabric.SimOptions.Configure
// instead.
type ECNOff struct{}

// PFCOff models a priority left out of the PFC configuration on one side
// of a link: PFC frames for Prio are not honoured. A frame that pauses
// only Prio is dropped; one that also names other priorities has Prio's
// class-enable bit and pause time cleared (Raw rewritten too) and goes on.
type PFCOff struct {
	Prio int
}

// DSCPMap models a wrong DSCP → traffic class map upstream: it rewrites
// the DSCP of IP packets per To (To[d] < 0 leaves DSCP d alone), keeping
// the ECN bits.
type DSCPMap struct {
	To [64]int8
}

// NewDSCPMap returns a DSCPMap that rewrites each pairs[i][0] to pairs[i][1].
func NewDSCPMap(pairs ...[2]uint8) DSCPMap {
	var m DSCPMap
	for i := range m.To {
		m.To[i] = -1
	}
	for _, pr := range pairs {
		m.To[pr[0]&63] = int8(pr[1] & 63)
	}
	return m
}

func (m DSCPMap) pairs() string {
	var out []string
	for from, to := range m.To {
		if to >= 0 {
			out = append(out, fmt.Sprintf("%d:%d", from, to))
		}
	}
	return strings.Join(out, " ")
}

// Rewriter is the stage of the misconfiguration models: ECN off, PFC off
// on a priority, DSCP rewrite.
type Rewriter struct {
	stage
	kind   Kind
	params Params
	ecnOff bool
	pfcOff int // priority, −1 none
	dscp   *DSCPMap
}

var _ Stage = (*Rewriter)(nil)

// NewECNOff returns the ECN-off stage.
func NewECNOff() *Rewriter {
	return &Rewriter{kind: KindECNOff, params: ECNOff{}, ecnOff: true, pfcOff: -1}
}

// NewPFCOff returns the PFC-off stage.
func NewPFCOff(m PFCOff) *Rewriter {
	return &Rewriter{kind: KindPFCOff, params: m, pfcOff: m.Prio}
}

// NewDSCPRewrite returns the DSCP rewrite stage.
func NewDSCPRewrite(m DSCPMap) *Rewriter {
	return &Rewriter{kind: KindDSCPMap, params: m, dscp: &m, pfcOff: -1}
}

// Kind returns the model.
func (r *Rewriter) Kind() Kind { return r.kind }

// String returns the parameters in Spec syntax.
func (r *Rewriter) String() string { return r.params.String() }

// Receive rewrites or drops p, or forwards it untouched.
func (r *Rewriter) Receive(p *wire.Packet) {
	if !r.take(p) {
		r.next.Receive(p)
		return
	}
	switch {
	case r.ecnOff:
		if p.IPVersion != 0 && p.ECN != wire.ECNNotECT {
			setTOS(p, p.DSCP, wire.ECNNotECT)
			r.c.Rewritten++
		}
	case r.pfcOff >= 0:
		bit := uint8(1) << uint(r.pfcOff)
		if p.Kind == wire.KindPFC && p.ClassEnable&bit != 0 {
			if p.ClassEnable == bit {
				r.drop()
				return
			}
			clearPFCClass(p, r.pfcOff)
			r.c.Rewritten++
		}
	case r.dscp != nil:
		if p.IPVersion != 0 {
			if to := r.dscp.To[p.DSCP&63]; to >= 0 && uint8(to) != p.DSCP {
				setTOS(p, uint8(to), p.ECN)
				r.c.Rewritten++
			}
		}
	}
	r.next.Receive(p)
}

// Collect emits the counters.
func (r *Rewriter) Collect(emit func(telemetry.Sample)) { r.c.emit(r.kind, emit) }

// setTOS sets p's DSCP and ECN, and in Raw (when present) the IPv4 TOS
// byte with a recomputed header checksum or the IPv6 traffic class. The
// ICRC masks these bits, and the IPv6 UDP checksum does not cover them,
// so both stay valid.
func setTOS(p *wire.Packet, dscp, ecn uint8) {
	p.DSCP, p.ECN = dscp&63, ecn&3
	tos := p.DSCP<<2 | p.ECN
	if p.Raw == nil || int(p.L3Offset)+20 > len(p.Raw) {
		return
	}
	h := p.Raw[p.L3Offset:]
	switch p.IPVersion {
	case 4:
		ihl := int(h[0]&0x0F) * 4
		if ihl < 20 || ihl > len(h) {
			return
		}
		h[1] = tos
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:], ipChecksum(h[:ihl]))
	case 6:
		h[0] = h[0]&0xF0 | tos>>4
		h[1] = h[1]&0x0F | tos<<4
	}
}

// ipChecksum is the Internet checksum (RFC 1071) of b.
func ipChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xFFFF {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

// clearPFCClass clears priority prio from a PFC frame's class-enable
// vector and pause times, in the descriptor and in Raw.
func clearPFCClass(p *wire.Packet, prio int) {
	p.ClassEnable &^= 1 << uint(prio)
	p.Quanta[prio] = 0
	off := 12 // destination and source MAC
	if p.HasVLAN {
		off += 4
	}
	off += 2 + 2 // EtherType, opcode
	if p.Raw == nil || off+2+16 > len(p.Raw) {
		return
	}
	binary.BigEndian.PutUint16(p.Raw[off:], uint16(p.ClassEnable))
	binary.BigEndian.PutUint16(p.Raw[off+2+2*prio:], 0)
}
