package cm

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pcap"
)

// TestHandshakeTshark writes a connection's life as RoCEv2 frames — REQ
// (with rdma_cm's IP CM header), MRA, REP, RTU, DREQ, DREP, and a REJ of
// a second REQ — and checks that Wireshark reads each as the CM message
// it is, with the fields the codecs wrote, and finds nothing malformed.
func TestHandshakeTshark(t *testing.T) {
	testenv.RequireTool(t, "tshark")
	a := wire.Packet{SrcIP: hostA, DstIP: hostB, SrcPort: 0xC001, DstPort: wire.RoCEPort,
		SrcMAC: [6]byte{2, 0, 0, 0, 1, 1}, DstMAC: [6]byte{2, 0, 0, 0, 4, 1}, TTL: 64}
	b := a
	b.SrcIP, b.DstIP, b.SrcMAC, b.DstMAC = hostB, hostA, a.DstMAC, a.SrcMAC
	req := sampleREQ()
	msgs := []struct {
		from wire.Packet
		m    Message
	}{
		{a, req},
		{b, &MRA{LocalCommID: 0x55, RemoteCommID: req.LocalCommID, ServiceTimeout: 20}},
		{b, &REP{LocalCommID: 0x55, RemoteCommID: req.LocalCommID, LocalQPN: 0x777, StartingPSN: 0x424242, RNRRetryCount: 7}},
		{a, &RTU{LocalCommID: req.LocalCommID, RemoteCommID: 0x55}},
		{a, &DREQ{LocalCommID: req.LocalCommID, RemoteCommID: 0x55, RemoteQPN: 0x777}},
		{b, &DREP{LocalCommID: 0x55, RemoteCommID: req.LocalCommID}},
		{b, &REJ{LocalCommID: 0, RemoteCommID: 0x99, Reason: RejectInvalidServiceID}},
		// Wireshark's CM dissector names no SIDR field: it shows their
		// attribute and checks the MAD.
		{a, &SIDRREQ{RequestID: 0x66, PKey: 0xFFFF, ServiceID: ServiceID(PortSpaceUDP, 7174)}},
		{b, &SIDRREP{RequestID: 0x66, QPN: 0x888, ServiceID: ServiceID(PortSpaceUDP, 7174), QKey: 0x01234567}},
	}
	path := filepath.Join(t.TempDir(), "cm.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcap.NewWriter(f, 65535)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		fr, err := Frame(m.from, uint32(i), AppendMAD(nil, 0x1000+uint64(i), m.m))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(time.Unix(0, int64(i)*1000), fr, len(fr)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fields := []string{"infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.deth.q_key", "infiniband.deth.srcqp",
		"infiniband.mad.mgmtclass", "infiniband.mad.attributeid", "infiniband.mad.transactionid",
		"infiniband.cm.req", "infiniband.cm.req.serviceid", "infiniband.cm.req.localqpn", "infiniband.cm.req.startpsn",
		"infiniband.cm.req.ip_cm.sport", "infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.dip4",
		"infiniband.cm.rep.remotecommid", "infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn",
		"infiniband.cm.rtu.remotecommid", "infiniband.cm.rej.reason", "infiniband.cm.dreq.localcommid",
		"_ws.malformed", "_ws.expert.severity"}
	frames := testenv.TsharkFields(t, path, fields)
	if len(frames) != len(msgs) {
		t.Fatalf("tshark printed %d frames, want %d: %q", len(frames), len(msgs), frames)
	}
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return 1<<64 - 1
		}
		return v
	}
	for i, vals := range frames {
		v := map[string]string{}
		for j, s := range vals {
			v[fields[j]] = s
		}
		attr := msgs[i].m.Attr()
		common := []struct {
			field string
			want  uint64
		}{{"infiniband.bth.opcode", uint64(wire.OpUDSendOnly)}, {"infiniband.bth.destqp", GSI},
			{"infiniband.deth.q_key", QKeyGSI}, {"infiniband.deth.srcqp", GSI},
			{"infiniband.mad.mgmtclass", MgmtClassCM}, {"infiniband.mad.attributeid", uint64(attr)},
			{"infiniband.mad.transactionid", 0x1000 + uint64(i)}}
		for _, c := range common {
			if got := num(v[c.field]); got != c.want {
				t.Errorf("%v: %s = %q, want %#x", attr, c.field, v[c.field], c.want)
			}
		}
		if v["_ws.malformed"] != "" || v["_ws.expert.severity"] != "" {
			t.Errorf("%v: Wireshark says malformed %q, expert severity %q", attr, v["_ws.malformed"], v["_ws.expert.severity"])
		}
		want := map[AttrID]map[string]string{
			AttrREQ: {"infiniband.cm.req": "0x11223344", "infiniband.cm.req.serviceid": "0x00000001061c06",
				"infiniband.cm.req.localqpn": "0x0abcde", "infiniband.cm.req.startpsn": "0x123456",
				"infiniband.cm.req.ip_cm.sport": "40000", "infiniband.cm.req.ip_cm.sip4": hostA.String(), "infiniband.cm.req.ip_cm.dip4": hostB.String()},
			AttrREP:  {"infiniband.cm.rep.remotecommid": "0x11223344", "infiniband.cm.rep.localqpn": "0x000777", "infiniband.cm.rep.startpsn": "0x424242"},
			AttrRTU:  {"infiniband.cm.rtu.remotecommid": "0x00000055"},
			AttrREJ:  {"infiniband.cm.rej.reason": "8"},
			AttrDREQ: {"infiniband.cm.dreq.localcommid": "0x11223344"},
		}[attr]
		for field, s := range want {
			if num(v[field]) != num(s) && v[field] != s {
				t.Errorf("%v: %s = %q, want %s", attr, field, v[field], s)
			}
		}
	}
	t.Logf("tshark read %d CM messages: %q", len(frames), frames)
}
