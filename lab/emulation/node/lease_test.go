package node_test

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/nodeapi"
)

// TestOwnerLease: an owner that stops renewing its lease (its process was
// killed) loses its QPs, even one a running job holds, and may create no
// more; an owner that renews keeps them (issue 24: QPs of a vanished
// initiator stayed in the peer until a restart).
func TestOwnerLease(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	mk := func(owner string) nodeapi.QPInfo {
		q, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", Owner: owner, LeaseMS: 600, Buffer: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	gone, kept := mk("gone"), mk("kept")
	// "gone"'s QP runs a job, connected to a QP on b, when its lease ends.
	peer, err := b.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", Buffer: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConnectQP(ctx, gone.ID, nodeapi.ConnectRequest{Remote: peer.Conn, RemoteBuffer: peer.Buffer}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ConnectQP(ctx, peer.ID, nodeapi.ConnectRequest{Remote: gone.Conn, RemoteBuffer: gone.Buffer}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StartPerf(ctx, nodeapi.PerfRequest{Role: "client", Op: "write", QPs: []int{gone.ID}, Size: 4096, Duration: clock.Second}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := a.RenewOwner(ctx, "kept", 600*time.Millisecond); err != nil {
			t.Fatalf("renew kept: %v", err)
		}
		_, errGone := a.QP(ctx, gone.ID)
		if isStatus(errGone, 404) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the QP of an owner that stopped renewing is still there after 5 s (lease 600 ms): %v", errGone)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := a.QP(ctx, kept.ID); err != nil {
		t.Errorf("the QP of an owner that renews is gone: %v", err)
	}
	if _, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", Owner: "gone", LeaseMS: 600}); !isStatus(err, 409) {
		t.Errorf("a create of an owner whose lease ran out: %v, want 409", err)
	}
	if err := a.RenewOwner(ctx, "gone", time.Second); !isStatus(err, 409) {
		t.Errorf("renewing a lease that ran out: %v, want 409", err)
	}
}
