package node_test

import (
	"net"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
)

// openNode builds node cfg over AF_PACKET sockets in its namespace and
// runs it until the test ends.
func openNode(t *testing.T, cfg node.Config) *nodeapi.Client {
	t.Helper()
	io, err := node.OpenIO(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, io, nil)
	if err != nil {
		io.Close()
		t.Fatal(err)
	}
	stop := runNode(t, n)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("%s: Run: %v", cfg.Name, err)
		}
		io.Close()
	})
	c := nodeapi.NewClient(cfg.Socket)
	t.Cleanup(c.Close)
	waitHealthy(t, c)
	return c
}

// TestEndpointOverVeth: endpoint node A — veth — switch node — veth —
// endpoint node B, each in its own namespace on real AF_PACKET sockets. A
// WRITE test moves checked data, and every RoCE frame the NICs received
// had a valid ICRC (their counters of bad ICRCs stay 0 while they counted
// the frames).
func TestEndpointOverVeth(t *testing.T) {
	testenv.RequireRoot(t)
	id := netnstest.Unique("")
	nsA, nsS, nsB := netnstest.New(t, "rltest-"+id+"ea"), netnstest.New(t, "rltest-"+id+"es"), netnstest.New(t, "rltest-"+id+"eb")
	ifA, ifS0, ifS1, ifB := "rle"+id+"a", "rle"+id+"s0", "rle"+id+"s1", "rle"+id+"b"
	macA, macS0, macS1, macB := hostMAC(1, 0), swMAC(0), swMAC(1), hostMAC(2, 0)
	newVeth(t, links.End{NetNS: nsA, Name: ifA, MAC: mustHW(t, macA)}, links.End{NetNS: nsS, Name: ifS0, MAC: mustHW(t, macS0)})
	newVeth(t, links.End{NetNS: nsS, Name: ifS1, MAC: mustHW(t, macS1)}, links.End{NetNS: nsB, Name: ifB, MAC: mustHW(t, macB)})
	dir := t.TempDir()
	const scale = 100

	sc := switchmodel.DefaultConfig()
	openNode(t, node.Config{
		Kind: nodeapi.KindSwitch, Name: "sw" + id, Scale: scale, Seed: 1, NetNS: nsS, Socket: filepath.Join(dir, "sw.sock"),
		Ports: []node.PortConfig{
			{IfName: ifS0, MAC: macS0, PeerMAC: macA, Rate: 100 * clock.Gbps, Delay: clock.Microsecond},
			{IfName: ifS1, MAC: macS1, PeerMAC: macB, Rate: 100 * clock.Gbps, Delay: clock.Microsecond},
		},
		Switch: &sc,
		Routes: []switchmodel.Route{
			{Prefix: netip.MustParsePrefix(hostIP(1, 0) + "/32"), Ports: []int{0}},
			{Prefix: netip.MustParsePrefix(hostIP(2, 0) + "/32"), Ports: []int{1}},
		},
	})
	host := func(h int, ns, ifname, peer string) *nodeapi.Client {
		cfg := endpointConfig(dir, h, []string{peer})
		cfg.Scale, cfg.NetNS = scale, ns
		cfg.Ports[0].IfName = ifname
		return openNode(t, cfg)
	}
	a, b := host(1, nsA, ifA, macS0), host(2, nsB, ifB, macS1)

	rep, err := jobs.RunPerf(t.Context(), jobs.NICRef{Node: "h1", NIC: "gpu0", Client: a}, jobs.NICRef{Node: "h2", NIC: "gpu0", Client: b},
		jobs.PerfSpec{Op: "write", Size: 65536, Iterations: 100, QPs: 2, Seed: 77}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Client
	t.Logf("%d msgs, %d B in %v: avg %.2f Gb/s; server got %d B; wrong %d", r.Messages, r.Bytes, r.Duration, r.BWAvg, rep.Server.Bytes, rep.WrongBytes)
	if r.Messages != 200 || !rep.Checked || rep.WrongBytes != 0 || rep.Server.Bytes < 200*65536 {
		t.Errorf("report %+v", rep)
	}
	if r.BWAvg <= 0 || r.BWAvg > 100.01 {
		t.Errorf("BW %.3f Gb/s, want within (0, 100] (real units)", r.BWAvg)
	}
	for name, c := range map[string]*nodeapi.Client{"A": a, "B": b} {
		s, err := c.Telemetry(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rx, bad := telemetry.Sum(s, "nic_rx_packets_total"), telemetry.Sum(s, "nic_rx_bad_icrc_total")
		t.Logf("%s: %v frames received, %v bad ICRC", name, rx, bad)
		if rx == 0 || bad != 0 {
			t.Errorf("%s: %v frames received, %v with a bad ICRC", name, rx, bad)
		}
	}
}

func mustHW(t testing.TB, s string) net.HardwareAddr {
	t.Helper()
	hw, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return hw
}
