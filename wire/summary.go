package wire

import (
	"fmt"
	"net"
	"strings"
)

func mac(m [6]byte) net.HardwareAddr { return net.HardwareAddr(m[:]) }

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindIP:
		return "ip"
	case KindRoCE:
		return "roce"
	case KindCNP:
		return "cnp"
	case KindPFC:
		return "pfc"
	case KindPause:
		return "pause"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Summary describes a decoded packet on one line, with every field the
// codecs read: for humans, logs and `rocelab wire decode`.
func (p *Packet) Summary() string {
	var b strings.Builder
	if p.HasVLAN {
		fmt.Fprintf(&b, "vlan=%d pcp=%d ", p.VLANID, p.PCP)
	}
	switch p.Kind {
	case KindPFC:
		fmt.Fprintf(&b, "PFC %v > %v enable=0x%02x quanta=%v", mac(p.SrcMAC), mac(p.DstMAC), p.ClassEnable, p.Quanta)
		return b.String()
	case KindPause:
		fmt.Fprintf(&b, "PAUSE %v > %v quanta=%d", mac(p.SrcMAC), mac(p.DstMAC), p.Quanta[0])
		return b.String()
	case KindOther:
		fmt.Fprintf(&b, "Ethernet %v > %v type=0x%04x len=%d", mac(p.SrcMAC), mac(p.DstMAC), p.EtherType, p.Len)
		return b.String()
	}
	fmt.Fprintf(&b, "IPv%d %v > %v dscp=%d ecn=%d ttl=%d", p.IPVersion, p.SrcIP, p.DstIP, p.DSCP, p.ECN, p.TTL)
	if p.IPVersion == 6 {
		fmt.Fprintf(&b, " flow=0x%05x", p.FlowLabel)
	}
	if p.Kind == KindIP {
		fmt.Fprintf(&b, " proto=%d sport=%d dport=%d", p.Protocol, p.SrcPort, p.DstPort)
		return b.String()
	}
	fmt.Fprintf(&b, " sport=%d | %v dqp=0x%06x psn=%d pkey=0x%04x", p.SrcPort, Opcode(p.Opcode), p.DestQP, p.PSN, p.PKey)
	for _, f := range []struct {
		on   bool
		name string
	}{{p.SE, "SE"}, {p.MigReq, "M"}, {p.AckReq, "A"}, {p.FECN, "FECN"}, {p.BECN, "BECN"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if p.TVer != 0 {
		fmt.Fprintf(&b, " tver=%d", p.TVer)
	}
	if p.HasRETH {
		fmt.Fprintf(&b, " | RETH va=0x%x rkey=0x%x len=%d", p.VA, p.RKey, p.DMALen)
	}
	if p.HasAETH {
		fmt.Fprintf(&b, " | AETH %s msn=%d", SyndromeString(p.Syndrome), p.MSN)
	}
	if p.HasImm {
		fmt.Fprintf(&b, " | ImmDt 0x%08x", p.Imm)
	}
	fmt.Fprintf(&b, " | payload=%d pad=%d", p.PayloadLen, p.PadCnt)
	return b.String()
}
