package wire

import (
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/rocelab/rocelab/wire/pcap"
)

// Sample is one frame of a kind the lab emits, with what was written into it.
type Sample struct {
	Name    string // what it is, e.g. "IPv4 RC SEND First"
	Spec    Packet // the fields written (the spec given to AppendFrame)
	Payload []byte // the RDMA payload written
	Frame   []byte // the frame
}

// sampleAddrs are the endpoints of the samples.
var (
	sampleMAC1 = [6]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	sampleMAC2 = [6]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}
)

// sampleSpecs lists the samples: every RC (atomics too) and UD opcode, every AETH syndrome
// class, CNP, IPv4 and IPv6, VLAN tags with PCP, PFC and PAUSE.
func sampleSpecs() []Sample {
	v4 := func(p Packet) Packet {
		p.SrcIP, p.DstIP = netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})
		return p
	}
	v6 := func(p Packet) Packet {
		p.SrcIP, p.DstIP = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
		return p
	}
	reth := func(p Packet) Packet {
		p.VA, p.RKey, p.DMALen = 0x00007F00DEAD1000, 0x00C0FFEE, 4096
		return p
	}
	aeth := func(p Packet, syn uint8) Packet {
		p.Syndrome, p.MSN = syn, 0x000123
		return p
	}
	deth := func(p Packet) Packet {
		p.SetDETH(0x80010000, 0x000ABC)
		return p
	}
	imm := func(p Packet) Packet {
		p.Imm = 0xDEADBEEF
		return p
	}
	atomic := func(p Packet) Packet {
		p.VA, p.RKey, p.DMALen = 0x00007F00DEAD1008, 0x00C0FFEE, 8
		p.SetAtomicETH(0x1122334455667788, 0x8877665544332211)
		return p
	}
	atomicAck := func(p Packet) Packet {
		p.SetAtomicAck(0x0102030405060708)
		return p
	}
	rc := func(op Opcode, psn uint32) Packet {
		return Packet{Kind: KindRoCE, Opcode: uint8(op), BTHControl: BTHControl{MigReq: true, PKey: DefaultPKey},
			DestQP: 0x000D1E, PSN: psn, DSCP: 26, ECN: ECNECT0, TTL: 64}
	}
	last := func(p Packet) Packet {
		p.SE, p.AckReq = true, true
		return p
	}
	s := []Sample{
		{Name: "IPv4 RC SEND First", Spec: v4(rc(OpSendFirst, 100)), Payload: pattern(64)},
		{Name: "IPv4 RC SEND Middle", Spec: v4(rc(OpSendMiddle, 101)), Payload: pattern(64)},
		{Name: "IPv4 RC SEND Last", Spec: v4(last(rc(OpSendLast, 102))), Payload: pattern(37)},
		{Name: "IPv4 RC SEND Last with Immediate", Spec: v4(imm(last(rc(OpSendLastImm, 103)))), Payload: pattern(38)},
		{Name: "IPv4 RC SEND Only", Spec: v4(last(rc(OpSendOnly, 104))), Payload: pattern(39)},
		{Name: "IPv4 RC SEND Only with Immediate", Spec: v4(imm(last(rc(OpSendOnlyImm, 105)))), Payload: pattern(40)},
		{Name: "IPv4 UD SEND Only", Spec: v4(deth(rc(OpUDSendOnly, 106))), Payload: pattern(256)},
		{Name: "IPv4 UD SEND Only with Immediate", Spec: v4(imm(deth(rc(OpUDSendOnlyImm, 107)))), Payload: pattern(23)},
		{Name: "IPv6 UD SEND Only", Spec: v6(deth(rc(OpUDSendOnly, 108))), Payload: pattern(64)},
		{Name: "IPv4 RC RDMA WRITE First", Spec: v4(reth(rc(OpWriteFirst, 0xFFFFFE))), Payload: pattern(64)},
		{Name: "IPv4 RC RDMA WRITE Middle, CE", Spec: ce(v4(rc(OpWriteMiddle, 0xFFFFFF))), Payload: pattern(64)},
		{Name: "IPv4 RC RDMA WRITE Last", Spec: v4(last(rc(OpWriteLast, 0))), Payload: pattern(33)},
		{Name: "IPv4 RC RDMA WRITE Last with Immediate", Spec: v4(imm(last(rc(OpWriteLastImm, 1)))), Payload: pattern(34)},
		{Name: "IPv4 RC RDMA WRITE Only", Spec: v4(reth(last(rc(OpWriteOnly, 2)))), Payload: pattern(35)},
		{Name: "IPv4 RC RDMA WRITE Only with Immediate", Spec: v4(imm(reth(last(rc(OpWriteOnlyImm, 3))))), Payload: pattern(36)},
		{Name: "IPv4 RC RDMA READ Request", Spec: v4(reth(last(rc(OpReadRequest, 4))))},
		{Name: "IPv4 RC RDMA READ Response First", Spec: v4(aeth(rc(OpReadResponseFirst, 4), SyndromeACK(31))), Payload: pattern(64)},
		{Name: "IPv4 RC RDMA READ Response Middle", Spec: v4(rc(OpReadResponseMiddle, 5)), Payload: pattern(64)},
		{Name: "IPv4 RC RDMA READ Response Last", Spec: v4(aeth(rc(OpReadResponseLast, 6), SyndromeACK(31))), Payload: pattern(41)},
		{Name: "IPv4 RC RDMA READ Response Only", Spec: v4(aeth(rc(OpReadResponseOnly, 7), SyndromeACK(31))), Payload: pattern(42)},
		{Name: "IPv4 RC CmpSwap", Spec: v4(atomic(last(rc(OpCompareSwap, 8))))},
		{Name: "IPv4 RC FetchAdd", Spec: v4(atomic(last(rc(OpFetchAdd, 9))))},
		{Name: "IPv4 RC ATOMIC Acknowledge", Spec: v4(atomicAck(aeth(rc(OpAtomicAcknowledge, 8), SyndromeACK(31))))},
		{Name: "IPv6 RC FetchAdd", Spec: flow(v6(atomic(last(rc(OpFetchAdd, 203)))))},
		{Name: "IPv4 RC ACK (credit 5)", Spec: v4(aeth(rc(OpAcknowledge, 102), SyndromeACK(5)))},
		{Name: "IPv4 RC RNR NAK (timer 14)", Spec: v4(aeth(rc(OpAcknowledge, 103), SyndromeRNR(14)))},
		{Name: "IPv4 RC NAK PSN sequence error", Spec: v4(aeth(rc(OpAcknowledge, 104), SyndromeNAKPSNSequence))},
		{Name: "IPv4 RC NAK invalid request", Spec: v4(aeth(rc(OpAcknowledge, 105), SyndromeNAKInvalidRequest))},
		{Name: "IPv4 RC NAK remote access error", Spec: v4(aeth(rc(OpAcknowledge, 106), SyndromeNAKRemoteAccess))},
		{Name: "IPv4 RC NAK remote operational error", Spec: v4(aeth(rc(OpAcknowledge, 107), SyndromeNAKRemoteOp))},
		{Name: "IPv4 CNP", Spec: v4(cnp())},
		{Name: "IPv6 RC SEND Only", Spec: flow(v6(last(rc(OpSendOnly, 200)))), Payload: pattern(45)},
		{Name: "IPv6 RC RDMA WRITE Only with Immediate", Spec: flow(v6(imm(reth(last(rc(OpWriteOnlyImm, 201)))))), Payload: pattern(46)},
		{Name: "IPv6 RC RDMA READ Request", Spec: flow(v6(reth(last(rc(OpReadRequest, 202)))))},
		{Name: "IPv6 RC RDMA READ Response Only", Spec: flow(v6(aeth(rc(OpReadResponseOnly, 202), SyndromeACK(31)))), Payload: pattern(47)},
		{Name: "IPv6 RC ACK (credit 0)", Spec: flow(v6(aeth(rc(OpAcknowledge, 201), SyndromeACK(0))))},
		{Name: "IPv6 RC NAK PSN sequence error", Spec: flow(v6(aeth(rc(OpAcknowledge, 199), SyndromeNAKPSNSequence)))},
		{Name: "IPv6 CNP", Spec: flow(v6(cnp()))},
		{Name: "IPv4 VLAN 100 PCP 3 RC RDMA WRITE First", Spec: vlan(v4(reth(rc(OpWriteFirst, 300))), 100, 3), Payload: pattern(64)},
		{Name: "IPv6 VLAN 200 PCP 5 RC SEND Last, FECN", Spec: fecn(vlan(v6(last(rc(OpSendLast, 301))), 200, 5)), Payload: pattern(5)},
		{Name: "PFC XOFF priority 3", Spec: Packet{Kind: KindPFC, ClassEnable: 1 << 3, Quanta: [8]uint16{3: 0xFFFF}}},
		{Name: "PFC priorities 0, 3, 7", Spec: Packet{Kind: KindPFC, ClassEnable: 0x89, Quanta: [8]uint16{0: 0x0101, 3: 0x0303, 7: 0x0707}}},
		{Name: "PFC XON priority 3", Spec: Packet{Kind: KindPFC, ClassEnable: 1 << 3}},
		{Name: "PAUSE", Spec: Packet{Kind: KindPause, Quanta: [8]uint16{0: 0x1234}}},
	}
	for i := range s {
		p := &s[i].Spec
		p.SrcMAC, p.DstMAC = sampleMAC1, sampleMAC2
		if p.Kind == KindPFC || p.Kind == KindPause {
			p.DstMAC = PFCDstMAC
		}
		if p.IPVersion = 0; p.SrcIP.IsValid() {
			p.IPVersion = 4
			if p.SrcIP.Is6() {
				p.IPVersion = 6
			}
			p.IPID = uint16(0x1000 + i)
			p.SrcPort = uint16(0xC000 + 37*i) // flow entropy
			p.DstPort = RoCEPort
			p.Protocol = ProtoUDP
		}
		if p.IPVersion == 6 {
			p.IPID = 0
		}
	}
	return s
}

func cnp() Packet {
	return Packet{Kind: KindCNP, Opcode: uint8(OpCNP), BTHControl: BTHControl{PKey: DefaultPKey, BECN: true}, DestQP: 0x000D1E, DSCP: 48, ECN: ECNNotECT, TTL: 64}
}

func ce(p Packet) Packet {
	p.ECN = ECNCE
	return p
}

func fecn(p Packet) Packet {
	p.FECN = true
	return p
}

func flow(p Packet) Packet {
	p.FlowLabel = 0xABCDE
	return p
}

func vlan(p Packet, id uint16, pcp uint8) Packet {
	p.HasVLAN, p.VLANID, p.PCP = true, id, pcp
	return p
}

// pattern returns n recognisable payload bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// Samples returns one frame of every kind of packet the lab emits: each RC
// opcode (each AETH syndrome class too), CNP, over IPv4 and IPv6, VLAN
// tagged with PCP, PFC and PAUSE. Each sample's Spec says what was written
// (Spec.PadCnt is the pad the builder chose); a test can compare a decoder's
// view of Frame against it.
func Samples() ([]Sample, error) {
	s := sampleSpecs()
	for i := range s {
		f, err := BuildFrame(&s[i].Spec, s[i].Payload)
		if err != nil {
			return nil, fmt.Errorf("sample %q: %w", s[i].Name, err)
		}
		s[i].Frame = f
		if k := s[i].Spec.Kind; k == KindRoCE || k == KindCNP {
			body := len(s[i].Payload)
			if k == KindCNP {
				body = CNPReservedLen
			}
			s[i].Spec.PadCnt = uint8((4 - body%4) % 4)
		}
	}
	return s, nil
}

// SampleEpoch is the timestamp (Unix seconds, 2025-01-01 UTC) of the first
// frame WriteSamplesPcap writes; frame i follows it by i microseconds, so
// the capture is reproducible.
const SampleEpoch = 1735689600

// WriteSamplesPcap writes [Samples] to w as a pcap capture (Ethernet link
// type), in order.
func WriteSamplesPcap(w io.Writer) error {
	s, err := Samples()
	if err != nil {
		return err
	}
	pw, err := pcap.NewWriter(w, 65535)
	if err != nil {
		return fmt.Errorf("write pcap header: %w", err)
	}
	for i, smp := range s {
		ts := time.Unix(SampleEpoch, int64(i)*int64(time.Microsecond))
		if err := pw.WriteFrame(ts, smp.Frame, len(smp.Frame)); err != nil {
			return fmt.Errorf("write pcap frame %d (%s): %w", i+1, smp.Name, err)
		}
	}
	return nil
}
