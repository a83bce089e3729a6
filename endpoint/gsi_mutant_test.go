//go:build rocelab_mutants

package endpoint

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/connmgr"
)

// TestMutantCMDefects: every cm-* mutant gives the NIC's Communication
// Manager a defect of its own, and no other mutant gives it any.
func TestMutantCMDefects(t *testing.T) {
	seen := map[connmgr.Defect]Mutant{}
	for _, m := range Mutants() {
		nic, err := NewNIC(Options{Name: "n", Sched: sim.New(1), IP: netip.MustParseAddr("10.0.0.1"), Mutant: m})
		if err != nil {
			t.Fatal(err)
		}
		d := nic.cmDefects()
		cmMut := strings.HasPrefix(m.String(), "cm-")
		switch {
		case cmMut && d == 0:
			t.Errorf("mutant %s gives the CM no defect", m)
		case !cmMut && d != 0:
			t.Errorf("mutant %s gives the CM defects %#x", m, d)
		case cmMut && seen[d] != 0:
			t.Errorf("mutants %s and %s give the CM the same defects %#x", seen[d], m, d)
		}
		seen[d] = m
	}
}
