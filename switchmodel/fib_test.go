package switchmodel_test

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// TestFIBCacheFollowsRoutes: the destination cache in front of the FIB
// must not hide routes added after a lookup (a more specific prefix, or
// more ports for the same prefix), nor mix up destinations that share a
// cache entry.
func TestFIBCacheFollowsRoutes(t *testing.T) {
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rates(6, g100), nil)
	to := func(a string) *wire.Packet {
		return &wire.Packet{Kind: wire.KindRoCE, IPVersion: 4, SrcIP: netip.MustParseAddr("10.0.0.1"),
			DstIP: netip.MustParseAddr(a), Protocol: 17, SrcPort: 50000, DstPort: 4791}
	}
	hop := func(a string) int {
		t.Helper()
		p, err := sw.NextHop(to(a))
		if err != nil {
			t.Fatalf("next hop of %s: %v", a, err)
		}
		return p
	}
	add := func(pfx string, ports ...int) {
		t.Helper()
		if err := sw.AddRoute(netip.MustParsePrefix(pfx), ports...); err != nil {
			t.Fatal(err)
		}
	}
	add("10.1.0.0/16", 1)
	if got := hop("10.1.2.3"); got != 1 {
		t.Fatalf("10.1.2.3 via %d, want 1", got)
	}
	add("10.1.2.0/31", 2) // more specific, after the address was cached
	if got := hop("10.1.2.3"); got != 1 {
		t.Errorf("10.1.2.3 via %d, want 1 (not in 10.1.2.0/31)", got)
	}
	if got := hop("10.1.2.1"); got != 2 {
		t.Errorf("10.1.2.1 via %d, want 2", got)
	}
	add("10.1.2.3/32", 3)
	if got := hop("10.1.2.3"); got != 3 {
		t.Errorf("10.1.2.3 via %d after its /32, want 3", got)
	}
	// Many destinations (more than the cache holds) each keep their own
	// route: /32 routes to ports 4 and 5 alternately.
	for i := range 1024 {
		a := netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)})
		add(netip.PrefixFrom(a, 32).String(), 4+i%2)
	}
	for round := range 2 {
		for i := range 1024 {
			a := netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)})
			if got := hop(a.String()); got != 4+i%2 {
				t.Fatalf("round %d: %s via %d, want %d", round, a, got, 4+i%2)
			}
		}
	}
	// Adding ports to a cached prefix widens its ECMP set.
	add("10.3.0.0/16", 1)
	if got := hop("10.3.0.1"); got != 1 {
		t.Fatalf("10.3.0.1 via %d, want 1", got)
	}
	add("10.3.0.0/16", 2, 3, 4)
	seen := map[int]bool{}
	for i := range 64 {
		p := to("10.3.0.1")
		p.SrcPort = uint16(50000 + i)
		n, err := sw.NextHop(p)
		if err != nil {
			t.Fatal(err)
		}
		seen[n] = true
	}
	if len(seen) != 4 {
		t.Errorf("10.3.0.0/16 spread over ports %v, want 1–4", seen)
	}
}

// TestSharedPrefixes: switches that number their prefixes together
// (Options.Prefixes, as a simulated fabric's do) route exactly as
// switches with tables of their own, although each has routes for
// different prefixes: a prefix another switch added is not a route here,
// and the longest prefix this switch has wins.
func TestSharedPrefixes(t *testing.T) {
	routes := map[string][]struct {
		pfx   string
		ports []int
	}{
		"a": {{"0.0.0.0/0", []int{0}}, {"10.0.0.0/8", []int{1}}, {"10.1.2.3/32", []int{2, 3}}, {"fd00::/8", []int{1}}},
		"b": {{"10.1.0.0/16", []int{3}}, {"10.1.2.0/31", []int{2}}, {"fd00:1::/64", []int{0, 1}}, {"10.1.0.0/16", []int{1}}},
	}
	dsts := []string{"10.1.2.3", "10.1.2.1", "10.1.9.9", "10.9.9.9", "192.0.2.1", "fd00:1::5", "fd00:2::5", "2001:db8::1"}
	build := func(shared *switchmodel.Prefixes) map[string]*switchmodel.Switch {
		e := sim.New(1)
		out := map[string]*switchmodel.Switch{}
		for _, name := range []string{"a", "b"} {
			specs := make([]switchmodel.PortSpec, 4)
			for i := range specs {
				specs[i] = switchmodel.PortSpec{Rate: g100, Delay: hop}
			}
			sw, err := switchmodel.New(switchmodel.Options{Name: name, Config: switchmodel.DefaultConfig(), Sched: e,
				Rand: e.Rand("switch/" + name), Ports: specs, Prefixes: shared})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range routes[name] {
				if err := sw.AddRoutes([]netip.Prefix{netip.MustParsePrefix(r.pfx)}, r.ports...); err != nil {
					t.Fatal(err)
				}
			}
			out[name] = sw
		}
		return out
	}
	own, shared := build(nil), build(switchmodel.NewPrefixes(0, 0))
	for _, name := range []string{"a", "b"} {
		for _, d := range dsts {
			for flow := range 4 { // different flows may take different ECMP ports
				p := &wire.Packet{Kind: wire.KindRoCE, SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr(d),
					Protocol: 17, SrcPort: uint16(50000 + flow), DstPort: 4791}
				if p.DstIP.Is6() {
					p.SrcIP = netip.MustParseAddr("fd00::1")
				}
				wantPort, wantErr := own[name].NextHop(p)
				gotPort, gotErr := shared[name].NextHop(p)
				if gotPort != wantPort || (gotErr == nil) != (wantErr == nil) {
					t.Errorf("%s to %s (flow %d): shared numbering gives %d, %v; own tables %d, %v", name, d, flow, gotPort, gotErr, wantPort, wantErr)
				}
			}
		}
	}
	if _, err := shared["b"].NextHop(&wire.Packet{DstIP: netip.MustParseAddr("192.0.2.1")}); err == nil {
		t.Error("b found a route to 192.0.2.1 through a's default route")
	}
}
