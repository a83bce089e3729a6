package faults

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/wire"
)

// Proto is a set of packet protocols a fault may be restricted to.
type Proto uint8

// Protocols.
const (
	ProtoRoCE  Proto = 1 << iota // RoCEv2 (data, ACK/NAK), not CNP
	ProtoCNP                     // RoCEv2 congestion notification
	ProtoPFC                     // 802.1Qbb PFC
	ProtoPause                   // 802.3x PAUSE
	ProtoIP                      // other IP (TCP, ICMP, non-RoCE UDP)
	ProtoARP                     // ARP (EtherType 0x0806)
	ProtoOther                   // any other frame
)

var protoNames = [...]struct {
	p    Proto
	name string
}{
	{ProtoRoCE, "roce"}, {ProtoCNP, "cnp"}, {ProtoPFC, "pfc"}, {ProtoPause, "pause"},
	{ProtoIP, "ip"}, {ProtoARP, "arp"}, {ProtoOther, "other"},
}

const etherTypeARP = 0x0806

// ProtoOf returns the protocol of p.
func ProtoOf(p *wire.Packet) Proto {
	switch p.Kind {
	case wire.KindRoCE:
		return ProtoRoCE
	case wire.KindCNP:
		return ProtoCNP
	case wire.KindPFC:
		return ProtoPFC
	case wire.KindPause:
		return ProtoPause
	case wire.KindIP:
		return ProtoIP
	}
	if p.EtherType == etherTypeARP {
		return ProtoARP
	}
	return ProtoOther
}

// Match restricts a fault to some packets. The zero Match takes every
// packet; each non-empty set must contain the packet's value (sets
// combine with AND). A switch maps DSCP (or PCP) to its traffic class, so
// "traffic class 3" is matched as the DSCPs the switch maps to 3 (DSCP
// 26 in the reference profile).
type Match struct {
	// DSCP is a bit set of DSCP values (bit d for DSCP d); packets that
	// are not IP never match a non-empty set.
	DSCP uint64
	// PCP is a bit set of 802.1Q priorities; untagged frames never match
	// a non-empty set.
	PCP uint8
	// Proto is a set of protocols.
	Proto Proto
}

// Matches reports whether m takes p.
func (m Match) Matches(p *wire.Packet) bool {
	if m.Proto != 0 && m.Proto&ProtoOf(p) == 0 {
		return false
	}
	if m.DSCP != 0 && (p.IPVersion == 0 || m.DSCP&(1<<(p.DSCP&63)) == 0) {
		return false
	}
	if m.PCP != 0 && (!p.HasVLAN || m.PCP&(1<<(p.PCP&7)) == 0) {
		return false
	}
	return true
}

// IsZero reports whether m takes every packet.
func (m Match) IsZero() bool { return m == Match{} }

// String formats m in Spec syntax ("match dscp 26 proto roce,cnp"), or ""
// for the zero Match.
func (m Match) String() string {
	if m.IsZero() {
		return ""
	}
	var parts []string
	if m.DSCP != 0 {
		parts = append(parts, "dscp "+bitList(m.DSCP))
	}
	if m.PCP != 0 {
		parts = append(parts, "pcp "+bitList(uint64(m.PCP)))
	}
	if m.Proto != 0 {
		var names []string
		for _, pn := range protoNames {
			if m.Proto&pn.p != 0 {
				names = append(names, pn.name)
			}
		}
		parts = append(parts, "proto "+strings.Join(names, ","))
	}
	return "match " + strings.Join(parts, " ")
}

func bitList(set uint64) string {
	var out []string
	for set != 0 {
		b := bits.TrailingZeros64(set)
		out = append(out, strconv.Itoa(b))
		set &^= 1 << b
	}
	return strings.Join(out, ",")
}

// parseMatch parses the clauses after the word "match".
func parseMatch(toks []string) (Match, error) {
	var m Match
	if len(toks) == 0 {
		return m, fmt.Errorf("match: want at least one of dscp, pcp, proto")
	}
	for len(toks) > 0 {
		key := toks[0]
		if len(toks) < 2 {
			return m, fmt.Errorf("match %s: missing value", key)
		}
		val := toks[1]
		toks = toks[2:]
		switch key {
		case "dscp", "pcp", "prio":
			max := 63
			if key != "dscp" {
				max = 7
			}
			for _, f := range strings.Split(val, ",") {
				n, err := strconv.Atoi(f)
				if err != nil || n < 0 || n > max {
					return m, fmt.Errorf("match %s: %q is not a number in 0..%d", key, f, max)
				}
				if key == "dscp" {
					m.DSCP |= 1 << n
				} else {
					m.PCP |= 1 << n
				}
			}
		case "proto":
		outer:
			for _, f := range strings.Split(val, ",") {
				for _, pn := range protoNames {
					if pn.name == strings.ToLower(f) {
						m.Proto |= pn.p
						continue outer
					}
				}
				return m, fmt.Errorf("match proto: unknown protocol %q (want roce, cnp, pfc, pause, ip, arp or other)", f)
			}
		default:
			return m, fmt.Errorf("match: unknown clause %q (want dscp, pcp or proto)", key)
		}
	}
	return m, nil
}
