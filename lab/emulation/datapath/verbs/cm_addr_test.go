package verbs

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
)

// TestResolve: rdma_cm's address resolution over the lab's hosts table.
// A peer is named by a NIC's address, another address of its host (its
// front-end address) or not at all; the local NIC is the bound one, else
// the one on the peer's rail.
func TestResolve(t *testing.T) {
	e := sim.New(1)
	a := netip.MustParseAddr
	mk := func(name, ip string) NIC {
		n, err := endpoint.NewNIC(endpoint.Options{Name: name, Sched: e, IP: a(ip), CC: endpoint.CCRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		return NIC{NIC: n, Name: name, MTU: 4096}
	}
	hosts := []Host{
		{Name: "host1", Addrs: []netip.Addr{a("198.19.0.1")}, NICs: []HostNIC{{"gpu0", a("198.18.0.1")}, {"gpu1", a("198.18.1.1")}}},
		{Name: "host4", Addrs: []netip.Addr{a("198.19.0.7")}, NICs: []HostNIC{{"gpu0", a("198.18.0.13")}, {"gpu1", a("198.18.1.13")}}},
	}
	s := New(Options{NICs: []NIC{mk("host1:gpu0", "198.18.0.1"), mk("host1:gpu1", "198.18.1.1")}, HostName: "host1", Hosts: hosts})
	for _, c := range []struct {
		name     string
		local    int
		dst      string
		wantNIC  int
		wantPeer string
		ok       bool
	}{
		{"a NIC's address, from the NIC on its rail", -1, "198.18.1.13", 1, "198.18.1.13", true},
		{"a NIC's address, from the bound NIC", 0, "198.18.1.13", 0, "198.18.1.13", true},
		{"a host's front-end address: its NIC on the first rail", -1, "198.19.0.7", 0, "198.18.0.13", true},
		{"a host's front-end address from gpu1: its gpu1", 1, "198.19.0.7", 1, "198.18.1.13", true},
		{"IPv4-mapped", -1, "::ffff:198.18.0.13", 0, "198.18.0.13", true},
		{"an address no host has", -1, "10.9.9.9", -1, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			nic, peer, ok := s.resolve(c.local, a(c.dst))
			if ok != c.ok || nic != c.wantNIC || c.ok && peer != a(c.wantPeer) {
				t.Errorf("resolve(%d, %s) = %d, %v, %v; want %d, %s, %v", c.local, c.dst, nic, peer, ok, c.wantNIC, c.wantPeer, c.ok)
			}
		})
	}
	for ip, want := range map[string]bool{"198.19.0.1": true, "127.0.0.1": true, "198.19.0.7": false, "198.18.0.1": false} {
		if got := s.isSelf(a(ip)); got != want {
			t.Errorf("isSelf(%s) = %v, want %v", ip, got, want)
		}
	}
}
