package switchmodel_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// ecmpSwitch has port 0 down to hosts and ports 1–4 up, with 10.1.0.0/16
// reachable over all four uplinks.
func ecmpSwitch(t *testing.T, cfg switchmodel.Config) *switchmodel.Switch {
	t.Helper()
	e := sim.New(7)
	sw := newSwitch(t, e, "leaf", cfg, rates(5, g100), nil)
	if err := sw.AddRoute(netip.MustParsePrefix("10.1.0.0/16"), 1, 2, 3, 4); err != nil {
		t.Fatal(err)
	}
	return sw
}

func randomFlow(r *rand.Rand) *wire.Packet {
	return &wire.Packet{
		Kind:      wire.KindRoCE,
		IPVersion: 4,
		SrcIP:     netip.AddrFrom4([4]byte{10, 0, byte(r.IntN(256)), byte(r.IntN(256))}),
		DstIP:     netip.AddrFrom4([4]byte{10, 1, byte(r.IntN(256)), byte(r.IntN(256))}),
		Protocol:  17,
		SrcPort:   uint16(49152 + r.IntN(16384)),
		DstPort:   4791,
		DestQP:    uint32(r.IntN(1 << 24)),
	}
}

// TestECMPSpread: 10 000 random flows over 4 uplinks. Each uplink should
// get 2 500; with a uniform hash the count is binomial (σ = √(10 000 ×
// ¼ × ¾) ≈ 43), so ±5 % (±125) is a ±2.9σ band.
func TestECMPSpread(t *testing.T) {
	sw := ecmpSwitch(t, switchmodel.DefaultConfig())
	r := rand.New(rand.NewPCG(1, 2))
	count := map[int]int{}
	for range 10000 {
		port, err := sw.NextHop(randomFlow(r))
		if err != nil {
			t.Fatal(err)
		}
		count[port]++
	}
	for port := 1; port <= 4; port++ {
		if n := count[port]; n < 2375 || n > 2625 {
			t.Errorf("uplink %d got %d flows, want 2500 ± 5%%", port, n)
		}
	}
	t.Logf("flows per uplink: %v", count)
}

// TestECMPQPAware: one 5-tuple carrying 8 QPs stays on one uplink with
// plain 5-tuple hashing and uses several with QP-aware hashing.
func TestECMPQPAware(t *testing.T) {
	for _, qpAware := range []bool{false, true} {
		cfg := switchmodel.DefaultConfig()
		cfg.ECMP.QPAware = qpAware
		sw := ecmpSwitch(t, cfg)
		p := randomFlow(rand.New(rand.NewPCG(3, 4)))
		used := map[int]bool{}
		for qp := range 8 {
			p.DestQP = uint32(0x1000 + qp)
			port, err := sw.NextHop(p)
			if err != nil {
				t.Fatal(err)
			}
			used[port] = true
		}
		if qpAware && len(used) < 2 {
			t.Errorf("QP-aware: 8 QPs of one 5-tuple used %d uplink(s), want more than one", len(used))
		}
		if !qpAware && len(used) != 1 {
			t.Errorf("5-tuple: 8 QPs of one 5-tuple used %d uplinks, want 1", len(used))
		}
	}
}

// TestSpray: packets with a spray DSCP go round-robin over the next hops,
// packet by packet, whatever their flow; others stay on their flow's hop.
func TestSpray(t *testing.T) {
	cfg := switchmodel.DefaultConfig()
	cfg.ECMP.SprayDSCPs = []uint8{26}
	sw := ecmpSwitch(t, cfg)
	p := randomFlow(rand.New(rand.NewPCG(5, 6)))
	p.DSCP = 26
	var got []int
	for range 8 {
		port, _ := sw.NextHop(p)
		got = append(got, port)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4, 1, 2, 3, 4}, got); diff != "" {
		t.Errorf("sprayed hops (-want +got):\n%s", diff)
	}
	p.DSCP = 0
	first, _ := sw.NextHop(p)
	for range 8 {
		if port, _ := sw.NextHop(p); port != first {
			t.Fatalf("unsprayed flow moved from %d to %d", first, port)
		}
	}

	cfg.ECMP.SprayRandom = true
	sw = ecmpSwitch(t, cfg)
	p.DSCP = 26
	count := map[int]int{}
	for range 4000 {
		port, _ := sw.NextHop(p)
		count[port]++
	}
	for port := 1; port <= 4; port++ {
		if n := count[port]; n < 900 || n > 1100 {
			t.Errorf("random spray: uplink %d got %d of 4000", port, n)
		}
	}
}

// TestLongestPrefixMatch checks the FIB picks the most specific route.
func TestLongestPrefixMatch(t *testing.T) {
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rates(4, g100), nil)
	for _, r := range []struct {
		pfx  string
		port int
	}{
		{"0.0.0.0/0", 0},
		{"10.0.0.0/8", 1},
		{"10.1.2.0/24", 2},
		{"10.1.2.3/32", 3},
		{"fd00::/8", 1},
		{"fd00:1::/64", 2},
	} {
		if err := sw.AddRoute(netip.MustParsePrefix(r.pfx), r.port); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		dst  string
		want int
	}{
		{"192.0.2.1", 0},
		{"10.9.9.9", 1},
		{"10.1.2.200", 2},
		{"10.1.2.3", 3},
		{"fd00:2::1", 1},
		{"fd00:1::9", 2},
	}
	for _, tc := range tests {
		got, err := sw.NextHop(&wire.Packet{DstIP: netip.MustParseAddr(tc.dst)})
		if err != nil || got != tc.want {
			t.Errorf("NextHop(%s) = %d, %v; want %d", tc.dst, got, err, tc.want)
		}
	}
	if _, err := sw.NextHop(&wire.Packet{DstIP: netip.MustParseAddr("2001:db8::1")}); err == nil {
		t.Error("no IPv6 default route, but NextHop found one")
	}
	if err := sw.AddRoute(netip.MustParsePrefix("10.0.0.0/8"), 9); err == nil {
		t.Error("AddRoute accepted port 9 of 4")
	}
}

// TestMappedPrefix: an IPv4-mapped IPv6 prefix routes IPv4 destinations.
func TestMappedPrefix(t *testing.T) {
	sw := newSwitch(t, sim.New(1), "sw", switchmodel.DefaultConfig(), rates(2, g100), nil)
	if err := sw.AddRoute(netip.MustParsePrefix("::ffff:10.2.0.0/112"), 1); err != nil {
		t.Fatal(err)
	}
	if got, err := sw.NextHop(&wire.Packet{DstIP: netip.MustParseAddr("10.2.3.4")}); err != nil || got != 1 {
		t.Errorf("NextHop = %d, %v; want 1", got, err)
	}
}
