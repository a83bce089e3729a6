package wire

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// tsharkFields are read back from the samples capture.
var tsharkFields = []string{
	"frame.number", "eth.dst", "eth.src", "vlan.priority", "vlan.id",
	"ip.src", "ip.dst", "ip.dsfield.dscp", "ip.dsfield.ecn", "ip.ttl", "ip.id", "ip.checksum.status",
	"ipv6.src", "ipv6.dst", "ipv6.tclass.dscp", "ipv6.tclass.ecn", "ipv6.flow", "ipv6.hlim",
	"udp.srcport", "udp.dstport", "udp.checksum.status",
	"infiniband.bth", "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
	"infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp",
	"infiniband.bth.a", "infiniband.bth.psn",
	"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
	"infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
	"infiniband.atomicacketh.origremdt", "infiniband.immdt", "infiniband.invariant.crc",
	"infiniband.deth.q_key", "infiniband.deth.srcqp",
	"macc.opcode", "macc.pause_time", "macc.cbfc.enbv",
	"macc.cbfc.pause_time.c0", "macc.cbfc.pause_time.c1", "macc.cbfc.pause_time.c2", "macc.cbfc.pause_time.c3",
	"macc.cbfc.pause_time.c4", "macc.cbfc.pause_time.c5", "macc.cbfc.pause_time.c6", "macc.cbfc.pause_time.c7",
	"_ws.malformed", "_ws.expert.severity",
}

// TestSamplesTshark writes the samples to a capture and checks, field by
// field, that Wireshark reads back exactly what the codecs wrote. Wireshark
// does not check the ICRC: TestSamplesDecode does, twice.
func TestSamplesTshark(t *testing.T) {
	testenv.RequireTool(t, "tshark")
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "samples.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSamplesPcap(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	frames := testenv.TsharkFields(t, path, tsharkFields,
		"-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
		// Wireshark's RPC-over-RDMA heuristic claims some SEND payloads and
		// then calls them malformed; the samples carry no RPC.
		"--disable-heuristic", "rpcrdma_infiniband")
	if len(frames) != len(samples) {
		t.Fatalf("tshark printed %d frames, want %d: %q", len(frames), len(samples), frames)
	}
	for i, vals := range frames {
		s := samples[i]
		if len(vals) != len(tsharkFields) {
			t.Fatalf("frame %d: %d fields, want %d: %q", i+1, len(vals), len(tsharkFields), vals)
		}
		got := make(map[string]string, len(vals))
		for j, v := range vals {
			got[tsharkFields[j]] = v
		}
		t.Run(s.Name, func(t *testing.T) { checkTshark(t, s, got) })
	}
}

func checkTshark(t *testing.T, s Sample, got map[string]string) {
	t.Helper()
	p := s.Spec
	want := map[string]string{}
	num := func(field string, v uint64) { want[field] = strconv.FormatUint(v, 10) }
	flag := func(field string, v bool) {
		want[field] = "0"
		if v {
			want[field] = "1"
		}
	}
	mac := func(m [6]byte) string {
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
	}
	want["eth.dst"], want["eth.src"] = mac(p.DstMAC), mac(p.SrcMAC)
	want["_ws.malformed"], want["_ws.expert.severity"] = "", ""
	if p.HasVLAN {
		num("vlan.priority", uint64(p.PCP))
		num("vlan.id", uint64(p.VLANID))
	}
	switch p.Kind {
	case KindPFC:
		num("macc.opcode", MACControlPFC)
		num("macc.cbfc.enbv", uint64(p.ClassEnable))
		for i, q := range p.Quanta {
			num(fmt.Sprintf("macc.cbfc.pause_time.c%d", i), uint64(q))
		}
	case KindPause:
		num("macc.opcode", MACControlPause)
		num("macc.pause_time", uint64(p.Quanta[0]))
	case KindRoCE, KindCNP:
		if p.IPVersion == 4 {
			want["ip.src"], want["ip.dst"] = p.SrcIP.String(), p.DstIP.String()
			num("ip.dsfield.dscp", uint64(p.DSCP))
			num("ip.dsfield.ecn", uint64(p.ECN))
			num("ip.ttl", uint64(p.TTL))
			num("ip.id", uint64(p.IPID))
			want["ip.checksum.status"] = "1"  // good
			want["udp.checksum.status"] = "3" // not present (0), as RoCE NICs send
		} else {
			want["ipv6.src"], want["ipv6.dst"] = p.SrcIP.String(), p.DstIP.String()
			num("ipv6.tclass.dscp", uint64(p.DSCP))
			num("ipv6.tclass.ecn", uint64(p.ECN))
			num("ipv6.flow", uint64(p.FlowLabel))
			num("ipv6.hlim", uint64(p.TTL))
			want["udp.checksum.status"] = "1" // good
		}
		num("udp.srcport", uint64(p.SrcPort))
		num("udp.dstport", RoCEPort)
		num("infiniband.bth.opcode", uint64(p.Opcode))
		flag("infiniband.bth.se", p.SE)
		flag("infiniband.bth.m", p.MigReq)
		num("infiniband.bth.padcnt", uint64(p.PadCnt))
		num("infiniband.bth.tver", uint64(p.TVer))
		num("infiniband.bth.p_key", uint64(p.PKey))
		num("infiniband.bth.destqp", uint64(p.DestQP))
		flag("infiniband.bth.a", p.AckReq)
		num("infiniband.bth.psn", uint64(p.PSN))
		ext := Opcode(p.Opcode).Ext()
		if ext&ExtDETH != 0 {
			qkey, src := p.DETH()
			num("infiniband.deth.q_key", uint64(qkey))
			num("infiniband.deth.srcqp", uint64(src))
		}
		if ext&ExtRETH != 0 {
			num("infiniband.reth.va", p.VA)
			num("infiniband.reth.r_key", uint64(p.RKey))
			num("infiniband.reth.dmalen", uint64(p.DMALen))
		}
		if ext&ExtAtomicETH != 0 {
			swap, cmp := p.AtomicETH()
			num("infiniband.reth.va", p.VA)
			num("infiniband.reth.r_key", uint64(p.RKey))
			num("infiniband.atomiceth.swapdt", swap)
			num("infiniband.atomiceth.cmpdt", cmp)
		}
		if ext&ExtAETH != 0 {
			num("infiniband.aeth.syndrome", uint64(p.Syndrome))
			num("infiniband.aeth.msn", uint64(p.MSN))
		}
		if ext&ExtAtomicAckETH != 0 {
			num("infiniband.atomicacketh.origremdt", p.AtomicAck())
		}
		if ext&ExtImmDt != 0 {
			want["infiniband.immdt"] = fmt.Sprintf("%08x", p.Imm)
		}
		// Wireshark 4.0 has no FECN/BECN fields: read byte 4 of the BTH it parsed.
		bth, err := hex.DecodeString(got["infiniband.bth"])
		if err != nil || len(bth) != BTHLen {
			t.Errorf("infiniband.bth = %q, want 12 bytes", got["infiniband.bth"])
		} else if fecn, becn := bth[4]&0x80 != 0, bth[4]&0x40 != 0; fecn != p.FECN || becn != p.BECN {
			t.Errorf("BTH FECN/BECN as Wireshark parsed = %v/%v, want %v/%v", fecn, becn, p.FECN, p.BECN)
		}
		// Wireshark shows the ICRC it found (as a big-endian number) for
		// the opcodes it knows; it must sit where the codec put it.
		if c := got["infiniband.invariant.crc"]; c != "" || p.Kind == KindRoCE {
			var q Packet
			if err := q.Decode(s.Frame); err != nil {
				t.Fatal(err)
			}
			computed, _, err := q.ICRC()
			if err != nil {
				t.Fatal(err)
			}
			num("infiniband.invariant.crc", uint64(bits.ReverseBytes32(computed)))
		}
	}
	for field, w := range want {
		g := got[field]
		if w != "" && g != "" {
			gv, gerr := strconv.ParseUint(g, 0, 64)
			wv, werr := strconv.ParseUint(w, 0, 64)
			if gerr == nil && werr == nil && gv == wv {
				continue
			}
		}
		if g != w {
			t.Errorf("%s: Wireshark read %q, codec wrote %q", field, g, w)
		}
	}
}
