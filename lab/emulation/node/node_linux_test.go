package node_test

import (
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/datapath/links/linkstest"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

func newVeth(t *testing.T, a, b links.End) {
	t.Helper()
	a.NoIPv6, b.NoIPv6 = true, true
	linkstest.Veth(t, links.Veth{A: a, B: b})
}

// TestNodeOverVeth: host A — veth — switch node (in-process, middle
// namespace, real AF_PACKET ports) — veth — host C. RoCE frames built
// with wire and sent from A arrive at C forwarded (MACs rewritten, TTL
// decremented, ICRC intact); the slow egress queues them and CE-marks the
// ones behind Kmax, and the marks seen at C match the switch's counter.
func TestNodeOverVeth(t *testing.T) {
	testenv.RequireRoot(t)
	id := netnstest.Unique("")
	nsA, nsS, nsC := netnstest.New(t, "rltest-"+id+"a"), netnstest.New(t, "rltest-"+id+"s"), netnstest.New(t, "rltest-"+id+"c")
	mac := func(i byte) net.HardwareAddr { return net.HardwareAddr{0x02, 0x7e, 0, 0, 0, i} }
	ifA, ifS0, ifS1, ifC := "rln"+id+"a", "rln"+id+"s0", "rln"+id+"s1", "rln"+id+"c"
	newVeth(t, links.End{NetNS: nsA, Name: ifA, MAC: mac(1)}, links.End{NetNS: nsS, Name: ifS0, MAC: mac(2)})
	newVeth(t, links.End{NetNS: nsS, Name: ifS1, MAC: mac(3)}, links.End{NetNS: nsC, Name: ifC, MAC: mac(4)})

	sc := switchmodel.DefaultConfig()
	sc.ECN[3] = switchmodel.ECNConfig{Enabled: true, Kmin: 2000, Kmax: 4000, Pmax: 1}
	cfg := node.Config{
		Kind: nodeapi.KindSwitch, Name: "sw" + id, Scale: 100, Seed: 1, NetNS: nsS,
		Socket: filepath.Join(t.TempDir(), "sw.sock"),
		Ports: []node.PortConfig{
			{IfName: ifS0, PeerMAC: mac(1).String(), Rate: 100 * clock.Gbps, Delay: clock.Microsecond},
			{IfName: ifS1, PeerMAC: mac(4).String(), Rate: 10 * clock.Gbps, Delay: clock.Microsecond},
		},
		Switch: &sc,
		Routes: []switchmodel.Route{{Prefix: netip.MustParsePrefix("10.0.1.0/24"), Ports: []int{1}}},
	}
	io, err := node.OpenIO(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { io.Close() })
	n, err := node.New(cfg, io, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := runNode(t, n)
	c := nodeapi.NewClient(cfg.Socket)
	defer c.Close()
	waitHealthy(t, c)

	tx, err := afpacket.Open(nsA, ifA, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	rx, err := afpacket.Open(nsC, ifC, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()

	const count = 50
	var frames [][]byte
	for i := range count {
		frames = append(frames, roce(t, mac(1).String(), mac(2).String(), "10.0.1.1", 1000, uint32(i)))
	}
	if sent, err := tx.WriteBatch(frames); err != nil || sent != count {
		t.Fatalf("sent %d of %d: %v", sent, count, err)
	}

	var got []wire.Packet
	bufs, lens := make([][]byte, 64), make([]int, 64)
	for i := range bufs {
		bufs[i] = make([]byte, 9300)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < count && time.Now().Before(deadline) {
		if _, err := rx.Wait(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		k, err := rx.ReadBatch(bufs, lens)
		if err != nil {
			t.Fatal(err)
		}
		for i := range k {
			var p wire.Packet
			if p.Decode(append([]byte(nil), bufs[i][:lens[i]]...)) == nil && p.Kind == wire.KindRoCE {
				got = append(got, p)
			}
		}
	}
	if len(got) != count {
		t.Fatalf("C received %d RoCE frames, want %d", len(got), count)
	}
	ce := 0
	for i, p := range got {
		if p.PSN != uint32(i) || p.TTL != 63 || p.SrcMAC != [6]byte(mac(3)) || p.DstMAC != [6]byte(mac(4)) {
			t.Errorf("frame %d: %s TTL %d MACs %x→%x", i, p.Summary(), p.TTL, p.SrcMAC, p.DstMAC)
		}
		if err := p.VerifyICRC(); err != nil {
			t.Errorf("frame %d: %v", i, err)
		}
		if p.ECN == wire.ECNCE {
			ce++
		}
	}
	s, err := c.Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	marked := telemetry.Sum(s, "switch_queue_ecn_marked_packets_total", telemetry.Label{Name: "port", Value: "1"})
	t.Logf("CE %d of %d, switch marked %v", ce, count, marked)
	if ce == 0 || ce == count || float64(ce) != marked {
		t.Errorf("C saw %d CE frames of %d; the switch marked %v", ce, count, marked)
	}
	if rxf := telemetry.Sum(s, "emu_rx_frames_total", telemetry.Label{Name: "ifname", Value: ifS0}); rxf < count {
		t.Errorf("emu_rx_frames_total on %s = %v, want >= %d", ifS0, rxf, count)
	}
	if err := c.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}
