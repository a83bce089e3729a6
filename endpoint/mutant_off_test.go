//go:build !rocelab_mutants

package endpoint_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
)

// TestNoMutantsShipped: the shipped build carries no mutant, and a NIC
// asked for one refuses to start instead of silently running correct.
func TestNoMutantsShipped(t *testing.T) {
	if endpoint.MutantsBuilt {
		t.Fatal("MutantsBuilt without the rocelab_mutants tag")
	}
	_, err := endpoint.NewNIC(endpoint.Options{Name: "n", Sched: sim.New(1), IP: netip.MustParseAddr("10.0.0.1"), Mutant: endpoint.MutIgnorePFC})
	if !errors.Is(err, endpoint.ErrNoMutants) {
		t.Errorf("NewNIC with a mutant: %v, want ErrNoMutants", err)
	}
}
