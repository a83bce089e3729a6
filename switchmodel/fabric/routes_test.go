package fabric

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// clos is a generated 2-tier Clos with IPv6, and a 2-tier front end with storage.
const clos = `
name: clos
addressing: {ipv6: true}
defaults:
  be: {rate: 400G, delay: 1us, mtu: 4200}
generate:
  hosts: 8
  gpus: 2
  rtsw: 4
  ctsw: 3
  fe: {rsw: 2, fsw: 2, storage: 2}
`

func loadTopo(t testing.TB, name string) *topologies.Topology {
	t.Helper()
	var topo *topologies.Topology
	var err error
	if name == "clos" {
		topo, err = topologies.Parse("clos.yaml", []byte(clos))
	} else {
		topo, err = topologies.Builtin(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// lpm is the longest-prefix match of a in routes.
func lpm(routes []switchmodel.Route, a netip.Addr) *switchmodel.Route {
	var best *switchmodel.Route
	for i := range routes {
		r := &routes[i]
		if r.Prefix.Contains(a) && (best == nil || r.Prefix.Bits() > best.Prefix.Bits()) {
			best = r
		}
	}
	return best
}

// walker follows the FIBs from a switch toward an address along every
// ECMP choice, memoising the switch count of each (switch, address).
type walker struct {
	topo   *topologies.Topology
	routes map[string][]switchmodel.Route
	memo   map[string]int
	onPath map[*topologies.Node]bool
}

// hops returns how many switches a packet for a traverses from s on,
// s included, when every ECMP choice takes the same number; it fails on a
// missing route, a loop, a path through a host, a path ending at the
// wrong NIC, or choices of unequal length.
func (w *walker) hops(s *topologies.Node, a netip.Addr, owner *topologies.Node) (int, error) {
	key := s.Name + "|" + a.String()
	if h, ok := w.memo[key]; ok {
		return h, nil
	}
	if s == owner {
		return 1, nil
	}
	if w.onPath[s] {
		return 0, fmt.Errorf("loop through %s toward %v", s.Name, a)
	}
	w.onPath[s] = true
	defer delete(w.onPath, s)
	r := lpm(w.routes[s.Name], a)
	if r == nil || len(r.Ports) == 0 {
		return 0, fmt.Errorf("%s: no route to %v", s.Name, a)
	}
	h := -1
	for _, i := range r.Ports {
		peer := s.Ports[i].Peer
		var n int
		if peer.Node.Kind != topologies.KindSwitch {
			if peer.Node != owner || peer.Addr.Addr() != a && peer.Addr6.Addr() != a {
				return 0, fmt.Errorf("%s: %v sent out %s to %s:%s", s.Name, a, s.Ports[i].Name, peer.Node.Name, peer.Name)
			}
			n = 1
		} else {
			var err error
			if n, err = w.hops(peer.Node, a, owner); err != nil {
				return 0, err
			}
			n++
		}
		if h >= 0 && n != h {
			return 0, fmt.Errorf("%s: ECMP choices toward %v take %d and %d switches", s.Name, a, h, n)
		}
		h = n
	}
	w.memo[key] = h
	return h, nil
}

// switchDist is the hop count between switches over switch-to-switch links,
// computed independently of Routes.
func switchDist(topo *topologies.Topology) map[[2]string]int {
	adj := map[string][]string{}
	for _, l := range topo.Links {
		if l.A.Node.Kind == topologies.KindSwitch && l.B.Node.Kind == topologies.KindSwitch {
			adj[l.A.Node.Name] = append(adj[l.A.Node.Name], l.B.Node.Name)
			adj[l.B.Node.Name] = append(adj[l.B.Node.Name], l.A.Node.Name)
		}
	}
	out := map[[2]string]int{}
	for _, n := range topo.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		out[[2]string{n.Name, n.Name}] = 0
		q := []string{n.Name}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for _, y := range adj[x] {
				k := [2]string{n.Name, y}
				if _, ok := out[k]; !ok {
					out[k] = out[[2]string{n.Name, x}] + 1
					q = append(q, y)
				}
			}
		}
	}
	return out
}

// nics returns the host and storage ports cabled to a switch.
func nics(topo *topologies.Topology) []*topologies.Port {
	var out []*topologies.Port
	for _, n := range topo.Nodes {
		if n.Kind == topologies.KindSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p.Peer != nil && p.Peer.Node.Kind == topologies.KindSwitch {
				out = append(out, p)
			}
		}
	}
	return out
}

func TestRoutesReachability(t *testing.T) {
	for _, name := range []string{"laptop", "clos", "incast", "two-zones"} {
		t.Run(name, func(t *testing.T) {
			topo := loadTopo(t, name)
			routes := Routes(topo)
			w := &walker{topo: topo, routes: routes, memo: map[string]int{}, onPath: map[*topologies.Node]bool{}}
			dist := switchDist(topo)
			all := nics(topo)
			pairs := 0
			for _, src := range all {
				for _, dst := range all {
					if src == dst {
						continue
					}
					from, to := src.Peer.Node, dst.Peer.Node
					want, same := dist[[2]string{from.Name, to.Name}]
					if src.Plane != dst.Plane {
						// Another plane: the source's switch must not know it.
						if r := lpm(routes[from.Name], dst.Addr.Addr()); r != nil {
							t.Errorf("%s routes %v of the other plane", from.Name, dst.Addr)
						}
						continue
					}
					if !same {
						t.Fatalf("%s and %s not connected", from.Name, to.Name)
					}
					for _, a := range []netip.Prefix{dst.Addr, dst.Addr6} {
						if !a.IsValid() {
							continue
						}
						h, err := w.hops(from, a.Addr(), dst.Node)
						if err != nil {
							t.Fatal(err)
						}
						if h != want+1 {
							t.Errorf("%s:%s → %s:%s (%v): %d switches, shortest is %d", src.Node.Name, src.Name, dst.Node.Name, dst.Name, a, h, want+1)
						}
						pairs++
					}
				}
			}
			// Every switch reaches every loopback and switch-to-switch address of its plane.
			for _, s := range topo.Nodes {
				for _, d := range topo.Nodes {
					if s.Kind != topologies.KindSwitch || d.Kind != topologies.KindSwitch || s == d || s.Plane != d.Plane {
						continue
					}
					addrs := []netip.Addr{d.Loopback}
					for _, p := range d.Ports {
						if p.Peer.Node.Kind == topologies.KindSwitch {
							addrs = append(addrs, p.Addr.Addr())
						}
					}
					for _, a := range addrs {
						h, err := w.hops(s, a, d)
						if err != nil {
							t.Fatal(err)
						}
						if want := dist[[2]string{s.Name, d.Name}] + 1; h != want {
							t.Errorf("%s → %s (%v): %d switches, shortest %d", s.Name, d.Name, a, h, want)
						}
					}
				}
			}
			if pairs == 0 {
				t.Fatal("no pairs checked")
			}
			t.Logf("%d NIC pairs (per address family) checked", pairs)
		})
	}
}

func TestRoutesECMPWidth(t *testing.T) {
	tests := []struct {
		topo, sw string
		dst      string // node:port whose address is looked up
		want     []string
	}{
		// rtsw1 reaches rack 2 over all four uplinks: two to each CTSW.
		{"laptop", "rtsw1", "host3:gpu0", []string{"p5", "p6", "p7", "p8"}},
		{"laptop", "rtsw2", "host1:gpu1", []string{"p5", "p6", "p7", "p8"}},
		// A CTSW reaches a rack over its two parallel links to that RTSW.
		{"laptop", "ctsw1", "host1:gpu0", []string{"p1", "p2"}},
		{"laptop", "ctsw2", "host4:gpu1", []string{"p3", "p4"}},
		// Directly attached.
		{"laptop", "rtsw1", "host2:gpu1", []string{"p4"}},
		{"laptop", "rsw1", "st1:fe0", []string{"p5"}},
		// Clos: rtsw1 spreads over all its uplinks, to all 3 CTSWs (hosts 1–2 on rtsw1, 7–8 on rtsw4).
		{"clos", "rtsw1", "host8:gpu0", nil},
		{"incast", "sw1", "receiver:gpu0", []string{"p9"}},
	}
	for _, tt := range tests {
		t.Run(tt.topo+"/"+tt.sw+"→"+tt.dst, func(t *testing.T) {
			topo := loadTopo(t, tt.topo)
			sw := topo.Node(tt.sw)
			node, port, _ := strings.Cut(tt.dst, ":")
			dst := topo.Node(node).Port(port)
			r := lpm(Routes(topo)[tt.sw], dst.Addr.Addr())
			if r == nil {
				t.Fatal("no route")
			}
			var got []string
			for _, i := range r.Ports {
				got = append(got, sw.Ports[i].Name)
			}
			want := tt.want
			if want == nil { // every uplink toward a CTSW
				ctsw := map[string]bool{}
				for _, p := range sw.Ports {
					if p.Peer.Node.Role == topologies.RoleCTSW {
						want = append(want, p.Name)
						ctsw[p.Peer.Node.Name] = true
					}
				}
				if len(ctsw) != 3 || len(want) < 3 {
					t.Fatalf("clos rtsw1 has %d uplinks to %d CTSWs, test expects all 3", len(want), len(ctsw))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ECMP ports %v, want %v", got, want)
			}
		})
	}
}

func TestRoutesPlanes(t *testing.T) {
	topo := loadTopo(t, "laptop")
	routes := Routes(topo)
	// rsw1: the five FE NIC subnets, nothing else (no other FE switch).
	if got := len(routes["rsw1"]); got != 5 {
		t.Errorf("rsw1 has %d routes, want 5: %v", got, routes["rsw1"])
	}
	for _, r := range routes["rsw1"] {
		if !topo.Plan.FE.Contains(r.Prefix.Addr()) || r.Prefix.Bits() != 31 {
			t.Errorf("rsw1 route %v is not an FE /31", r.Prefix)
		}
	}
	// rtsw1: 8 BE NIC subnets (4 connected), 3 loopbacks, the CTSWs' 8
	// addresses on their RTSW links and rtsw2's 4 uplink addresses.
	if got, want := len(routes["rtsw1"]), 8+3+8+4; got != want {
		t.Errorf("rtsw1 has %d routes, want %d", got, want)
	}
	for _, r := range routes["rtsw1"] {
		if topo.Plan.FE.Contains(r.Prefix.Addr()) {
			t.Errorf("rtsw1 routes FE prefix %v", r.Prefix)
		}
	}
}
