package node_test

import (
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cmagent"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// TestAdapterCM: two back-to-back endpoint nodes make a connection
// through the adapter's CM operations (b connects to a's listener; a's
// consumer accepts, b's confirms), each node reports its side's events,
// and a call asking other CM timeouts than the running manager's is
// refused (409).
func TestAdapterCM(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	spec := nodeapi.CMSpec{Timeout: clock.Millisecond, Retries: 3}
	if err := a.CMListen(ctx, nodeapi.CMListen{Listen: cmagent.Listen{Spec: spec, Port: 7471, QKey: 0x11}}); err != nil {
		t.Fatal(err)
	}
	nics, err := a.NICs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.CMConnect(ctx, nodeapi.CMConnect{Connect: cmagent.Connect{Spec: spec, To: netip.MustParseAddr(nics[0].IP), Port: 7471}})
	if err != nil || c.ID == 0 || c.QPN == 0 {
		t.Fatalf("connect: %+v, %v", c, err)
	}
	kinds := func(cl *nodeapi.Client, want ...string) {
		var got []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			ev, err := cl.CMEvents(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ev {
				got = append(got, e.Kind)
			}
			if slices.Equal(got, want) {
				return
			}
		}
		t.Errorf("events %v, want %v", got, want)
	}
	kinds(b, "replied")
	kinds(a, "connect-request", "established")
	err = a.CMListen(ctx, nodeapi.CMListen{Listen: cmagent.Listen{Spec: nodeapi.CMSpec{Timeout: 2 * clock.Millisecond, Retries: 3}, Port: 7472}})
	var ae *nodeapi.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		t.Errorf("listen with other timeouts: %v, want 409", err)
	}
	if err := a.CMReset(ctx, ""); err != nil {
		t.Fatal(err)
	}
}
