package topologies

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddressingUnique(t *testing.T) {
	for _, name := range BuiltinNames() {
		topo, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		addrs, macs, ifnames := map[netip.Addr]string{}, map[string]string{}, map[string]string{}
		for _, n := range topo.Nodes {
			if n.Loopback.IsValid() {
				addrs[n.Loopback] = n.Name + " lo"
			}
			for _, p := range n.Ports {
				id := n.Name + ":" + p.Name
				if old, dup := addrs[p.Addr.Addr()]; dup {
					t.Errorf("%s: %s and %s share address %s", name, old, id, p.Addr)
				}
				addrs[p.Addr.Addr()] = id
				if old, dup := macs[p.MAC.String()]; dup {
					t.Errorf("%s: %s and %s share MAC %s", name, old, id, p.MAC)
				}
				macs[p.MAC.String()] = id
				if old, dup := ifnames[p.IfName]; dup {
					t.Errorf("%s: %s and %s share interface name %s", name, old, id, p.IfName)
				}
				ifnames[p.IfName] = id
				if len(p.IfName) > 15 {
					t.Errorf("%s: %s interface name %q longer than 15", name, id, p.IfName)
				}
				if !topo.Plan.Owns(p.IfName) {
					t.Errorf("%s: plan does not own %s", name, p.IfName)
				}
				if p.MAC[0]&0x02 == 0 || p.MAC[0]&0x01 != 0 {
					t.Errorf("%s: MAC %s not locally administered unicast", id, p.MAC)
				}
				pool := topo.Plan.BE
				if p.Plane == FE {
					pool = topo.Plan.FE
				}
				if !pool.Contains(p.Addr.Addr()) || p.Addr.Bits() != 31 {
					t.Errorf("%s: address %s not a /31 of %s", id, p.Addr, pool)
				}
				// Both ends share the /31.
				if p.Addr.Masked() != p.Peer.Addr.Masked() {
					t.Errorf("%s: %s and peer %s in different subnets", id, p.Addr, p.Peer.Addr)
				}
			}
		}
	}
}

func TestAddressingDeterministic(t *testing.T) {
	a, _ := Builtin("laptop")
	b, _ := Builtin("laptop")
	if diff := cmp.Diff(portTable(a), portTable(b)); diff != "" {
		t.Errorf("two loads differ:\n%s", diff)
	}
	if err := b.Address("other-lab"); err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Nodes[0].Ports[0], b.Nodes[0].Ports[0]
	if pa.Addr != pb.Addr {
		t.Errorf("addresses depend on the lab name: %s vs %s", pa.Addr, pb.Addr)
	}
	if pa.MAC.String() == pb.MAC.String() || pa.IfName == pb.IfName {
		t.Errorf("MAC/ifname do not depend on the lab name: %s %s", pa.MAC, pa.IfName)
	}
	if a.Plan.Owns(pb.IfName) || !b.Plan.Owns(pb.IfName) {
		t.Errorf("Owns(%s) wrong", pb.IfName)
	}
	c, _ := Builtin("laptop")
	c.Address("other-lab")
	if diff := cmp.Diff(portTable(b), portTable(c)); diff != "" {
		t.Errorf("Address not deterministic:\n%s", diff)
	}
}

func TestAddressingPlan(t *testing.T) {
	topo, err := Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	h1 := topo.Node("host1").Port("gpu0")
	// The switch takes the even address, the host the odd one.
	if got, want := h1.Addr.String(), "198.18.0.1/31"; got != want {
		t.Errorf("host1:gpu0 = %s, want %s", got, want)
	}
	if got, want := h1.Peer.Addr.String(), "198.18.0.0/31"; got != want {
		t.Errorf("rtsw1:p1 = %s, want %s", got, want)
	}
	if got := topo.Node("rtsw1").Loopback.String(); got != "198.19.128.1" {
		t.Errorf("rtsw1 loopback %s", got)
	}
	h, node, port, ok := ParseIfName(h1.IfName)
	if !ok || h != topo.Plan.Hash&0xfff || node != 1 || port != 1 {
		t.Errorf("ParseIfName(%q) = %x %d %d %v", h1.IfName, h, node, port, ok)
	}
	if _, _, _, ok := ParseIfName("eth0"); ok {
		t.Error("ParseIfName(eth0) ok")
	}
	if got := IfName("x", 65535, 255); len(got) > 15 {
		t.Errorf("largest interface name %q is longer than 15", got)
	}
}

func TestAddressingOverride(t *testing.T) {
	src := `name: ov
addressing: {be: 10.0.0.0/24, fe: 10.1.0.0/24, loopback: 10.2.0.0/24, ipv6: true}
nodes:
  h1: {kind: host}
  s1: {kind: switch, role: rtsw}
  r1: {kind: switch, role: rsw}
links:
  - h1:gpu0 -- s1
  - h1:fe0 -- r1
`
	topo, err := Parse("ov.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := topo.Node("h1").Port("gpu0")
	if p.Addr.String() != "10.0.0.1/31" || p.Addr6.String() != "2001:2::1/127" {
		t.Errorf("h1:gpu0 = %s %s", p.Addr, p.Addr6)
	}
	if got := topo.Node("h1").Port("fe0").Addr.String(); got != "10.1.0.1/31" {
		t.Errorf("h1:fe0 = %s", got)
	}

	bad := []struct{ src, want string }{
		{strings.Replace(src, "be: 10.0.0.0/24", "be: 10.0.0.0/32", 1), "holds 0"},
		{strings.Replace(src, "fe: 10.1.0.0/24", "fe: 10.0.0.0/25", 1), "overlap"},
		{strings.Replace(src, "be: 10.0.0.0/24", "be: 10.0.0.1/24", 1), "host bits"},
		{strings.Replace(src, "be: 10.0.0.0/24", "be: fd00::/64", 1), "not an IPv4 prefix"},
	}
	for _, tc := range bad {
		_, err := Parse("ov.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ov.yaml:2:") {
			t.Errorf("error = %v, want ov.yaml:2: … %q", err, tc.want)
		}
	}
}
