package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func baseSpec() Packet {
	return Packet{Kind: KindRoCE, Opcode: uint8(OpSendOnly), SrcIP: netip.MustParseAddr("10.0.0.1"),
		DstIP: netip.MustParseAddr("10.0.0.2"), BTHControl: BTHControl{PKey: DefaultPKey}, DestQP: 17, PSN: 5, DSCP: 26, ECN: ECNECT0}
}

func TestAppendFrameInvalid(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(p *Packet)
		payload []byte
	}{
		{"no IPs", func(p *Packet) { p.SrcIP, p.DstIP = netip.Addr{}, netip.Addr{} }, nil},
		{"mixed IP versions", func(p *Packet) { p.DstIP = netip.MustParseAddr("fd00::2") }, nil},
		{"DestQP 25 bits", func(p *Packet) { p.DestQP = 1 << 24 }, nil},
		{"PSN 25 bits", func(p *Packet) { p.PSN = 1 << 24 }, nil},
		{"MSN 25 bits", func(p *Packet) { p.MSN = 1 << 24 }, nil},
		{"TVer 5 bits", func(p *Packet) { p.TVer = 16 }, nil},
		{"DSCP 64", func(p *Packet) { p.DSCP = 64 }, nil},
		{"ECN 4", func(p *Packet) { p.ECN = 4 }, nil},
		{"PCP 8", func(p *Packet) { p.HasVLAN, p.PCP = true, 8 }, nil},
		{"VLAN 4096", func(p *Packet) { p.HasVLAN, p.VLANID = true, 4096 }, nil},
		{"flow label 21 bits", func(p *Packet) { p.FlowLabel = 1 << 20 }, nil},
		{"CNP with payload", func(p *Packet) { p.Kind = KindCNP }, []byte{1}},
		{"payload too big", func(p *Packet) {}, make([]byte, 70000)},
		{"kind IP", func(p *Packet) { p.Kind = KindIP }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := baseSpec()
			tt.mod(&p)
			dst := []byte{0xAA}
			got, err := AppendFrame(dst, &p, tt.payload)
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("AppendFrame error = %v, want ErrInvalidSpec", err)
			}
			if !bytes.Equal(got, dst) {
				t.Errorf("AppendFrame returned %x on error, want dst unchanged", got)
			}
		})
	}
}

// TestLargestFrames: the largest payload fits exactly, in both IP
// versions; one more 4-byte word does not. IPv4's total length counts its
// 20-byte header, IPv6's payload length only the UDP datagram.
func TestLargestFrames(t *testing.T) {
	// UDP 8 + BTH 12 + payload + ICRC 4 = the UDP datagram.
	for _, tc := range []struct {
		name    string
		src     string
		largest int
	}{
		{"IPv4", "10.0.0.1", 0xFFFF - 20 - 8 - 12 - 4 - 3}, // a multiple of 4
		{"IPv6", "fd00::1", 0xFFFF - 8 - 12 - 4 - 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := baseSpec()
			p.SrcIP = netip.MustParseAddr(tc.src)
			p.DstIP = netip.MustParseAddr(strings.Replace(tc.src, "1", "2", 1))
			f, err := AppendFrame(nil, &p, make([]byte, tc.largest))
			if err != nil {
				t.Fatalf("%d-byte payload: %v", tc.largest, err)
			}
			var q Packet
			if err := q.Decode(f); err != nil || int(q.PayloadLen) != tc.largest {
				t.Errorf("decoding it: payload %d, %v", q.PayloadLen, err)
			}
			if _, err := AppendFrame(nil, &p, make([]byte, tc.largest+4)); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("%d-byte payload: %v, want ErrInvalidSpec", tc.largest+4, err)
			}
		})
	}
}

func TestAppendFrameAppends(t *testing.T) {
	p := baseSpec()
	prefix := []byte("prefix")
	frame, err := AppendFrame(bytes.Clone(prefix), &p, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(frame, prefix) {
		t.Fatalf("AppendFrame did not keep dst: %q", frame[:6])
	}
	var q Packet
	if err := q.Decode(frame[len(prefix):]); err != nil {
		t.Fatal(err)
	}
	if string(q.Payload()) != "hello" || q.PadCnt != 3 || q.VerifyICRC() != nil {
		t.Errorf("decoded payload %q pad %d ICRC %v", q.Payload(), q.PadCnt, q.VerifyICRC())
	}
	// TTL 0 in the spec means the default.
	if q.TTL != DefaultTTL {
		t.Errorf("TTL = %d, want %d", q.TTL, DefaultTTL)
	}
}

func TestZeroAllocs(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 2048)
	var p Packet
	for _, s := range samples {
		if n := testing.AllocsPerRun(20, func() {
			var err error
			if buf, err = AppendFrame(buf[:0], &s.Spec, s.Payload); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: AppendFrame allocates %.0f times", s.Name, n)
		}
		if n := testing.AllocsPerRun(20, func() {
			if err := p.Decode(s.Frame); err != nil {
				t.Fatal(err)
			}
			if p.Kind == KindRoCE || p.Kind == KindCNP {
				if err := p.VerifyICRC(); err != nil {
					t.Fatal(err)
				}
				p.MarkCE()
			}
		}); n != 0 {
			t.Errorf("%s: Decode+VerifyICRC+MarkCE allocates %.0f times", s.Name, n)
		}
	}
}

func TestOpcodeTable(t *testing.T) {
	tests := []struct {
		op   Opcode
		name string
		ext  Ext
	}{
		{OpSendFirst, "RC SEND First", 0},
		{OpSendLastImm, "RC SEND Last with Immediate", ExtImmDt},
		{OpWriteFirst, "RC RDMA WRITE First", ExtRETH},
		{OpWriteOnlyImm, "RC RDMA WRITE Only with Immediate", ExtRETH | ExtImmDt},
		{OpReadRequest, "RC RDMA READ Request", ExtRETH},
		{OpReadResponseMiddle, "RC RDMA READ Response Middle", 0},
		{OpReadResponseOnly, "RC RDMA READ Response Only", ExtAETH},
		{OpAcknowledge, "RC Acknowledge", ExtAETH},
		{OpCNP, "CNP", 0},
		{0xC1, "manufacturer-specific 0xc1", 0},
		{0x24, "opcode 0x24", 0},
	}
	for _, tt := range tests {
		if tt.op.String() != tt.name || tt.op.Ext() != tt.ext {
			t.Errorf("%#x: %q %v, want %q %v", uint8(tt.op), tt.op.String(), tt.op.Ext(), tt.name, tt.ext)
		}
	}
	if n := (ExtRETH | ExtAETH | ExtImmDt).Len(); n != 24 {
		t.Errorf("all extension headers = %d bytes, want 24", n)
	}
	syn := map[uint8]string{
		SyndromeACK(5): "ACK credit 5", SyndromeRNR(14): "RNR NAK timer 14",
		SyndromeNAKPSNSequence: "NAK PSN sequence error", SyndromeNAKInvalidRequest: "NAK invalid request",
		SyndromeNAKRemoteAccess: "NAK remote access error", SyndromeNAKRemoteOp: "NAK remote operational error",
	}
	for s, want := range syn {
		if got := SyndromeString(s); got != want {
			t.Errorf("SyndromeString(%#x) = %q, want %q", s, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	samples, _ := Samples()
	for _, s := range samples {
		var p Packet
		if err := p.Decode(s.Frame); err != nil {
			t.Fatal(err)
		}
		sum := p.Summary()
		var want string
		switch p.Kind {
		case KindPFC:
			want = "PFC"
		case KindPause:
			want = "PAUSE"
		default:
			want = Opcode(p.Opcode).String()
		}
		if !strings.Contains(sum, want) {
			t.Errorf("%s: summary %q lacks %q", s.Name, sum, want)
		}
	}
}
