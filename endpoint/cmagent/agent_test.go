package cmagent

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/connmgr"
)

func newNIC(t *testing.T) *endpoint.NIC {
	t.Helper()
	nic, err := endpoint.NewNIC(endpoint.Options{Name: "n", Sched: sim.New(1), IP: netip.MustParseAddr("10.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	return nic
}

// TestAgentRefuses: an agent is not made on a NIC whose CM serves another
// consumer, nor with a spec that cannot run, and refuses operations that
// ask other timeouts than its manager's.
func TestAgentRefuses(t *testing.T) {
	spec := Spec{Timeout: clock.Millisecond, Retries: 3}
	busy := newNIC(t)
	busy.StartCM(connmgr.Config{})
	for _, tc := range []struct {
		name string
		nic  *endpoint.NIC
		spec Spec
		want error // nil: any error
	}{
		{"busy", busy, spec, ErrBusy},
		{"no timeout", newNIC(t), Spec{Retries: 3}, nil},
		{"no retries", newNIC(t), Spec{Timeout: clock.Millisecond}, nil},
	} {
		if _, err := New(tc.nic, tc.spec); err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: New: %v, want %v", tc.name, err, tc.want)
		}
	}
	a, err := New(newNIC(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(Listen{Spec: Spec{Timeout: 2 * clock.Millisecond, Retries: 3}, Port: 1}); !errors.Is(err, ErrSpec) {
		t.Errorf("Listen with another spec: %v, want ErrSpec", err)
	}
	if _, err := a.Connect(Connect{Spec: spec, To: netip.MustParseAddr("10.0.0.2"), Port: 1}); err != nil {
		t.Errorf("Connect: %v", err)
	}
	if ev := a.Events(); ev == nil || len(ev) != 0 {
		t.Errorf("Events before any: %#v, want empty", ev)
	}
	a.Reset()
	if len(a.qps) != 0 {
		t.Errorf("Reset left %d QPs", len(a.qps))
	}
}
