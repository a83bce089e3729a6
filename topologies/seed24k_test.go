package topologies

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestSeed24k generates the seed's cluster at full size and checks its
// shape against what the file and Meta's paper say: 24,576 GPU NICs at
// 400G on 3,072 hosts in 8 zones; per zone 96 RTSWs and 24 CTSWs; 48
// ATSWs; every RTSW 48 uplinks for 32 GPU ports (under-subscribed), every
// CTSW 192 downlinks and 48 uplinks (4:1 across zones), every ATSW a port
// to each of the 192 CTSWs; the front end on RSWs and FSWs; unique
// addresses on all 70,656 back-end links.
func TestSeed24k(t *testing.T) {
	tp, err := Builtin("seed-24k")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[Role]int{}
	hosts, gpus, zones := 0, 0, map[int]bool{}
	for _, n := range tp.Nodes {
		switch n.Kind {
		case KindSwitch:
			roles[n.Role]++
		case KindHost:
			hosts++
			gpus += n.GPUs
			zones[n.Zone] = true
		}
	}
	if hosts != 3072 || gpus != 24576 || len(zones) != 8 {
		t.Errorf("%d hosts, %d GPUs, %d zones; want 3,072, 24,576, 8", hosts, gpus, len(zones))
	}
	for role, want := range map[Role]int{RoleRTSW: 8 * 96, RoleCTSW: 8 * 24, RoleATSW: 48} {
		if roles[role] != want {
			t.Errorf("%d %s switches, want %d", roles[role], role, want)
		}
	}
	if roles[RoleRSW] == 0 || roles[RoleFSW] == 0 {
		t.Errorf("front end: %d RSWs, %d FSWs", roles[RoleRSW], roles[RoleFSW])
	}
	be := 0
	addrs := map[string]bool{}
	for _, l := range tp.Links {
		if l.A.Plane != BE {
			continue
		}
		be++
		for _, p := range []*Port{l.A, l.B} {
			if p.Rate != 400*clock.Gbps {
				t.Fatalf("%s:%s at %v, want 400G", p.Node.Name, p.Name, p.Rate)
			}
			a := p.Addr.String()
			if addrs[a] {
				t.Fatalf("address %s twice", a)
			}
			addrs[a] = true
		}
	}
	if want := 24576 + 8*96*48 + 8*24*48; be != want {
		t.Errorf("%d back-end links, want %d", be, want)
	}
	// Ports up and down each tier: RTSW 32 down, 48 up; CTSW 192 down, 48
	// up; ATSW 192 down.
	for _, n := range tp.Nodes {
		if n.Kind != KindSwitch || n.Plane != BE {
			continue
		}
		down, up := 0, 0
		for _, p := range n.Ports {
			if p.Peer == nil {
				continue
			}
			switch peer := p.Peer.Node; {
			case peer.Kind == KindHost, n.Role == RoleCTSW && peer.Role == RoleRTSW, n.Role == RoleATSW && peer.Role == RoleCTSW:
				down++
			default:
				up++
			}
		}
		want := map[Role][2]int{RoleRTSW: {32, 48}, RoleCTSW: {192, 48}, RoleATSW: {192, 0}}[n.Role]
		if [2]int{down, up} != want {
			t.Fatalf("%s (%s): %d ports down, %d up; want %v", n.Name, n.Role, down, up, want)
		}
	}
}
