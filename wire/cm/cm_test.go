package cm

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	hostA = netip.MustParseAddr("10.1.1.1")
	hostB = netip.MustParseAddr("10.1.4.1")
)

// sampleREQ is an rdma_cm REQ from hostA's port 40000 to a listener on
// TCP port space port 7174 of hostB.
func sampleREQ() *REQ {
	return &REQ{LocalCommID: 0x11223344, ServiceID: ServiceID(PortSpaceTCP, 7174), LocalCAGUID: 0x0200_0aff_fe01_0101,
		LocalQPN: 0xABCDE, ResponderResources: 16, InitiatorDepth: 16, RemoteCMResponseTimeout: 20,
		StartingPSN: 0x123456, LocalCMResponseTimeout: 20, RetryCount: 7, PKey: 0xFFFF, PathMTU: 5,
		RNRRetryCount: 7, MaxCMRetries: 15,
		Primary: Path{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: GID(hostA), RemoteGID: GID(hostB),
			TrafficClass: 106, HopLimit: 64, PacketRate: 3, SubnetLocal: false, LocalAckTimeout: 18},
		Private: AppendIPPrivate(nil, IPPrivate{SrcPort: 40000, Src: hostA, Dst: hostB}, []byte("hello"))}
}

// padded is p zero-filled to n bytes: a decoded message's private data.
func padded(p []byte, n int) []byte {
	return append(append([]byte(nil), p...), make([]byte, n-len(p))...)
}

// TestRoundTrip: every message decodes to what was appended, in a MAD
// with the CM's header.
func TestRoundTrip(t *testing.T) {
	req := sampleREQ()
	for _, tc := range []struct {
		m      Message
		decode func(d []byte) (Message, error)
		want   Message
	}{
		{req, func(d []byte) (Message, error) { var m REQ; return &m, DecodeREQ(d, &m) },
			func() Message { c := *req; c.Private = padded(req.Private, reqPrivateLen); return &c }()},
		{&REP{LocalCommID: 7, RemoteCommID: 0x11223344, LocalQPN: 0x12, StartingPSN: 0xFFFFFF, ResponderResources: 1,
			InitiatorDepth: 2, TargetAckDelay: 15, FailoverAccepted: 3, EndToEndFlowControl: true, RNRRetryCount: 7, SRQ: true,
			LocalCAGUID: 9, Private: []byte{1, 2, 3}},
			func(d []byte) (Message, error) { var m REP; return &m, DecodeREP(d, &m) },
			&REP{LocalCommID: 7, RemoteCommID: 0x11223344, LocalQPN: 0x12, StartingPSN: 0xFFFFFF, ResponderResources: 1,
				InitiatorDepth: 2, TargetAckDelay: 15, FailoverAccepted: 3, EndToEndFlowControl: true, RNRRetryCount: 7, SRQ: true,
				LocalCAGUID: 9, Private: padded([]byte{1, 2, 3}, repPrivateLen)}},
		{&RTU{LocalCommID: 1, RemoteCommID: 2}, func(d []byte) (Message, error) { var m RTU; return &m, DecodeRTU(d, &m) },
			&RTU{LocalCommID: 1, RemoteCommID: 2, Private: make([]byte, rtuPrivateLen)}},
		{&REJ{LocalCommID: 3, RemoteCommID: 4, MessageRejected: 0, Reason: RejectConsumer, ARI: []byte{9}, Private: []byte("no")},
			func(d []byte) (Message, error) { var m REJ; return &m, DecodeREJ(d, &m) },
			&REJ{LocalCommID: 3, RemoteCommID: 4, Reason: RejectConsumer, ARI: []byte{9}, Private: padded([]byte("no"), rejPrivateLen)}},
		{&DREQ{LocalCommID: 5, RemoteCommID: 6, RemoteQPN: 0xFFFFFF}, func(d []byte) (Message, error) { var m DREQ; return &m, DecodeDREQ(d, &m) },
			&DREQ{LocalCommID: 5, RemoteCommID: 6, RemoteQPN: 0xFFFFFF, Private: make([]byte, dreqPrivateLen)}},
		{&DREP{LocalCommID: 6, RemoteCommID: 5}, func(d []byte) (Message, error) { var m DREP; return &m, DecodeDREP(d, &m) },
			&DREP{LocalCommID: 6, RemoteCommID: 5, Private: make([]byte, rtuPrivateLen)}},
		{&MRA{LocalCommID: 8, RemoteCommID: 9, MessageMRAed: 1, ServiceTimeout: 31},
			func(d []byte) (Message, error) { var m MRA; return &m, DecodeMRA(d, &m) },
			&MRA{LocalCommID: 8, RemoteCommID: 9, MessageMRAed: 1, ServiceTimeout: 31, Private: make([]byte, mraPrivateLen)}},
		{&SIDRREQ{RequestID: 10, PKey: 0xFFFF, ServiceID: ServiceID(PortSpaceUDP, 7174), Private: []byte{4}},
			func(d []byte) (Message, error) { var m SIDRREQ; return &m, DecodeSIDRREQ(d, &m) },
			&SIDRREQ{RequestID: 10, PKey: 0xFFFF, ServiceID: ServiceID(PortSpaceUDP, 7174), Private: padded([]byte{4}, 216)}},
		{&SIDRREP{RequestID: 10, Status: SIDRValid, QPN: 0xABCDEF, ServiceID: 0x11, QKey: 0x01234567, Private: []byte{5}},
			func(d []byte) (Message, error) { var m SIDRREP; return &m, DecodeSIDRREP(d, &m) },
			&SIDRREP{RequestID: 10, QPN: 0xABCDEF, ServiceID: 0x11, QKey: 0x01234567, Private: padded([]byte{5}, 136)}},
	} {
		mad := AppendMAD(nil, 0xFEED, tc.m)
		if len(mad) != MADLen {
			t.Fatalf("%v: MAD of %d bytes", tc.m.Attr(), len(mad))
		}
		var h Header
		d, err := DecodeHeader(mad, &h)
		if err != nil || h != (Header{Method: MethodSend, TID: 0xFEED, Attr: tc.m.Attr()}) {
			t.Fatalf("%v: header %+v, %v", tc.m.Attr(), h, err)
		}
		got, err := tc.decode(d)
		if err != nil {
			t.Fatalf("%v: %v", tc.m.Attr(), err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v round trip (-want +got):\n%s", tc.m.Attr(), diff)
		}
	}
}

// TestREQOffsets pins fields of a REQ to IBTA table 106's bytes (after the
// 24-byte MAD header).
func TestREQOffsets(t *testing.T) {
	d := AppendMAD(nil, 1, sampleREQ())[HeaderLen:]
	for _, tc := range []struct {
		name string
		at   int
		want []byte
	}{
		{"local comm ID", 0, []byte{0x11, 0x22, 0x33, 0x44}},
		{"service ID (A11: 0x0000000001, TCP, port 7174)", 8, []byte{0, 0, 0, 0, 0x01, 0x06, 0x1C, 0x06}},
		{"local QPN, responder resources", 32, []byte{0x0A, 0xBC, 0xDE, 16}},
		{"starting PSN, local CM timeout 20 | retry 7", 44, []byte{0x12, 0x34, 0x56, 20<<3 | 7}},
		{"P_Key, MTU 5 | RNR retry 7, max CM retries 15", 48, []byte{0xFF, 0xFF, 5<<4 | 7, 15 << 4}},
		{"primary LIDs", 52, []byte{0xFF, 0xFF, 0xFF, 0xFF}},
		{"primary local GID (IPv4-mapped)", 56, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 1, 1, 1}},
		{"packet rate, traffic class, hop limit", 91, []byte{3, 106, 64}},
		{"IP CM header: version, IPv4, source port", 140, []byte{0, 0x40, 0x9C, 0x40}},
	} {
		if got := d[tc.at : tc.at+len(tc.want)]; !bytes.Equal(got, tc.want) {
			t.Errorf("%s at %d: % x, want % x", tc.name, tc.at, got, tc.want)
		}
	}
}

func TestIPPrivate(t *testing.T) {
	for _, h := range []IPPrivate{
		{SrcPort: 1, Src: hostA, Dst: hostB},
		{SrcPort: 65535, Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2")},
	} {
		p := AppendIPPrivate(nil, h, []byte("x"))
		var got IPPrivate
		rest, err := DecodeIPPrivate(p, &got)
		if err != nil || got != h || string(rest) != "x" {
			t.Errorf("%+v: got %+v, rest %q, %v", h, got, rest, err)
		}
	}
	if ps, port, ok := ServicePort(ServiceID(PortSpaceTCP, 7174)); !ok || ps != PortSpaceTCP || port != 7174 {
		t.Errorf("ServicePort = %#x %d %v", ps, port, ok)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := AppendMAD(nil, 1, &RTU{})
	bad := append([]byte(nil), good...)
	bad[1] = 0x81 // another management class
	for name, mad := range map[string][]byte{"short": good[:100], "class": bad} {
		var h Header
		if _, err := DecodeHeader(mad, &h); !errors.Is(err, ErrMAD) {
			t.Errorf("%s: %v, want ErrMAD", name, err)
		}
	}
	var m REQ
	if err := DecodeREQ(make([]byte, 10), &m); !errors.Is(err, ErrMAD) {
		t.Errorf("short REQ: %v", err)
	}
	var p IPPrivate
	if _, err := DecodeIPPrivate(append([]byte{0, 0x50}, make([]byte, 40)...), &p); !errors.Is(err, ErrMAD) {
		t.Errorf("IP version 5: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendMAD(nil, 1, sampleREQ()))
	f.Add(AppendMAD(nil, 2, &REJ{ARI: []byte{1}}))
	f.Fuzz(func(t *testing.T, mad []byte) {
		var h Header
		d, err := DecodeHeader(mad, &h)
		if err != nil {
			return
		}
		var (
			req REQ
			rep REP
			rej REJ
			rtu RTU
			drq DREQ
			mra MRA
			ip  IPPrivate
		)
		DecodeREQ(d, &req)
		DecodeREP(d, &rep)
		DecodeREJ(d, &rej)
		DecodeRTU(d, &rtu)
		DecodeDREQ(d, &drq)
		DecodeMRA(d, &mra)
		DecodeIPPrivate(req.Private, &ip)
		// What decodes appends back to the same data.
		if again := AppendMAD(nil, h.TID, &req)[HeaderLen:]; !bytes.Equal(again[:4], d[:4]) {
			t.Errorf("REQ local comm ID did not round-trip: % x vs % x", again[:4], d[:4])
		}
	})
}
