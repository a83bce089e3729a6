package topologies

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ip(v int) *int { return &v }

func resolveGenerated(t *testing.T, g *GenerateSpec) *Topology {
	t.Helper()
	nodes, links, err := Generate(g)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteExplicit(&buf, "gen", "", []string{"test"}, nodes, links); err != nil {
		t.Fatal(err)
	}
	topo, err := Parse("gen.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("generated file does not validate: %v", err)
	}
	return topo
}

func checkPorts(t *testing.T, topo *Topology) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range topo.Links {
		for _, p := range []*Port{l.A, l.B} {
			k := p.Node.Name + ":" + p.Name
			if seen[k] {
				t.Errorf("port %s used twice", k)
			}
			seen[k] = true
		}
	}
	for _, n := range topo.Nodes {
		for _, p := range n.Ports {
			if p.Link == nil {
				t.Errorf("port %s:%s has no link", n.Name, p.Name)
			}
		}
	}
}

func TestGenerateZone64(t *testing.T) {
	g := &GenerateSpec{Hosts: ip(64), GPUs: ip(8), RTSW: ip(16), CTSW: ip(8), FE: &FESpec{RSW: ip(16), FSW: ip(2), Storage: ip(4)}}
	topo := resolveGenerated(t, g)
	s := topo.Summary()
	want := Summary{Name: "gen", Nodes: 64 + 16 + 8 + 16 + 2 + 4, Hosts: 64, GPUs: 512, Switches: 16 + 8 + 16 + 2, Storage: 4,
		Links: 512 + 16*32 + 64 + 16*2 + 4, BELinks: 512 + 16*32, FELinks: 64 + 16*2 + 4}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	checkPorts(t, topo)
	for _, n := range topo.Nodes {
		switch n.Role {
		case RoleRTSW, RoleCTSW:
			if len(n.Ports) != 64 {
				t.Errorf("%s has %d ports, want 64", n.Name, len(n.Ports))
			}
		case RoleFSW:
			if len(n.Ports) != 16+2 {
				t.Errorf("%s has %d ports, want 18", n.Name, len(n.Ports))
			}
		}
	}
	// Rack attach: all 8 NICs of host5 (rack 2) on rtsw2.
	for _, p := range topo.Node("host5").Ports[:8] {
		if p.PeerNode != "rtsw2" {
			t.Errorf("host5:%s on %s, want rtsw2", p.Name, p.PeerNode)
		}
	}
	// The generate block resolves exactly like the written file.
	var file bytes.Buffer
	fmt.Fprintf(&file, "name: gen\ngenerate:\n  hosts: 64\n  gpus: 8\n  rtsw: 16\n  ctsw: 8\n  fe: {rsw: 16, fsw: 2, storage: 4}\n")
	block, err := Parse("gen.yaml", file.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(portTable(topo), portTable(block)); diff != "" {
		t.Errorf("generate block differs from written file (-file +block):\n%s", diff)
	}
}

func portTable(t *Topology) []string {
	var rows []string
	for _, n := range t.Nodes {
		for _, p := range n.Ports {
			rows = append(rows, fmt.Sprintf("%s:%s %s:%s %v %s %s %s", n.Name, p.Name, p.PeerNode, p.PeerPort, p.Rate, p.Addr, p.MAC, p.IfName))
		}
	}
	return rows
}

func TestGenerateDeterministic(t *testing.T) {
	g := &GenerateSpec{Zones: ip(2), Hosts: ip(8), GPUs: ip(4), RTSW: ip(4), CTSW: ip(2), ATSW: ip(2), FE: &FESpec{Storage: ip(2)}}
	write := func() string {
		n, l, err := Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		WriteExplicit(&b, "x", "", nil, n, l)
		return b.String()
	}
	if a, b := write(), write(); a != b {
		t.Error("two runs of the generator differ")
	}
}

func TestGenerateRail(t *testing.T) {
	g := &GenerateSpec{Hosts: ip(8), GPUs: ip(4), RTSW: ip(4), CTSW: ip(2), Attach: "rail"}
	topo := resolveGenerated(t, g)
	checkPorts(t, topo)
	for _, n := range topo.Nodes {
		if n.Kind != KindHost {
			continue
		}
		for i := range 4 {
			if got, want := n.Port(fmt.Sprintf("gpu%d", i)).PeerNode, fmt.Sprintf("rtsw%d", i+1); got != want {
				t.Errorf("%s:gpu%d on %s, want %s (rail)", n.Name, i, got, want)
			}
		}
	}
}

func TestGenerateOversubscription(t *testing.T) {
	tests := []struct {
		name                 string
		g                    *GenerateSpec
		role                 Role
		wantDown, wantUplink int
	}{
		{"rtsw 2:1", &GenerateSpec{Hosts: ip(4), GPUs: ip(8), RTSW: ip(1), CTSW: ip(4), Oversubscription: ratio(2)}, RoleRTSW, 32, 16},
		{"rtsw 3:1 rounds up to a multiple of ctsw", &GenerateSpec{Hosts: ip(4), GPUs: ip(8), RTSW: ip(1), CTSW: ip(4), Oversubscription: ratio(3)}, RoleRTSW, 32, 12},
		{"ctsw to atsw 2:1", &GenerateSpec{Zones: ip(2), Hosts: ip(4), GPUs: ip(4), RTSW: ip(2), CTSW: ip(2), ATSW: ip(2), ZoneOversubscription: ratio(2)}, RoleCTSW, 8, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := resolveGenerated(t, tc.g)
			checkPorts(t, topo)
			for _, n := range topo.Nodes {
				if n.Role != tc.role {
					continue
				}
				down, up := 0, 0
				for _, p := range n.Ports {
					if p.Peer.Node.Role.Tier() > n.Role.Tier() {
						up++
					} else {
						down++
					}
				}
				if down != tc.wantDown || up != tc.wantUplink {
					t.Errorf("%s: %d down, %d up; want %d, %d", n.Name, down, up, tc.wantDown, tc.wantUplink)
				}
			}
		})
	}
}

func ratio(f float64) *Ratio { r := Ratio(f); return &r }

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		g    *GenerateSpec
		want string
	}{
		{&GenerateSpec{GPUs: ip(8), RTSW: ip(2), CTSW: ip(2)}, "hosts missing"},
		{&GenerateSpec{Zones: ip(2), Hosts: ip(4), RTSW: ip(2), CTSW: ip(2)}, "need an ATSW layer"},
		{&GenerateSpec{Hosts: ip(4), RTSW: ip(8), CTSW: ip(2)}, "leaves racks empty"},
		{&GenerateSpec{Hosts: ip(4), GPUs: ip(8), RTSW: ip(4), CTSW: ip(2), Attach: "rail"}, "multiple of gpus"},
		{&GenerateSpec{Hosts: ip(4), RTSW: ip(2), CTSW: ip(2), Attach: "ring"}, `attach "ring"`},
		{&GenerateSpec{Hosts: ip(4), RTSW: ip(2), CTSW: ip(2), FE: &FESpec{RSW: ip(2), FSW: ip(0)}}, "need an FSW layer"},
	}
	for _, tc := range tests {
		_, _, err := Generate(tc.g)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate = %v, want error containing %q", err, tc.want)
		}
	}
}
