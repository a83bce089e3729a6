package node

import (
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
)

// TestLinksInside: a group runs its collectives' data work on the loop
// only when every link to another node stays inside it.
func TestLinksInside(t *testing.T) {
	mac := func(b byte) [6]byte { return [6]byte{2, 0, 0, 0, 0, b} }
	cfgs := []Config{
		{Name: "a", Ports: []PortConfig{{PeerLoop: true}, {PeerLoop: false}}},
		{Name: "b", Ports: []PortConfig{{PeerLoop: true}}},
	}
	for _, tc := range []struct {
		name  string
		ports [][]emu.Port
		want  bool
	}{
		{"cabled to each other, and a kernel interface", [][]emu.Port{
			{{MAC: mac(1), PeerMAC: mac(3)}, {MAC: mac(2), PeerMAC: mac(9)}},
			{{MAC: mac(3), PeerMAC: mac(1)}},
		}, true},
		{"a node outside", [][]emu.Port{
			{{MAC: mac(1), PeerMAC: mac(3)}, {MAC: mac(2), PeerMAC: mac(9)}},
			{{MAC: mac(3), PeerMAC: mac(7)}},
		}, false},
	} {
		if got := linksInside(cfgs, tc.ports); got != tc.want {
			t.Errorf("%s: linksInside = %v, want %v", tc.name, got, tc.want)
		}
	}
}
