package node_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
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

// TestCollectivePeerDiesLeavesNoQPs: a collective whose peer node dies
// mid-run stops within its stall limit, and the surviving node keeps none
// of its QPs.
func TestCollectivePeerDiesLeavesNoQPs(t *testing.T) {
	dir := t.TempDir()
	wa, wb := emu.NewMemWaiter(), emu.NewMemWaiter()
	pa, pb := wa.NewPort(), wb.NewPort()
	emu.Join(pa, pb)
	a := startNode(t, endpointConfig(dir, 1, []string{hostMAC(2, 0)}), wa, []*emu.MemPort{pa})
	nb, err := node.New(endpointConfig(dir, 2, []string{hostMAC(1, 0)}), node.IO{Ports: []emu.PortIO{pb}, Waiter: wb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopB := runNode(t, nb)
	b := nodeapi.NewClient(endpointConfig(dir, 2, nil).Socket)
	t.Cleanup(b.Close)
	waitHealthy(t, b)
	ranks := []jobs.NICRef{{Node: "h1", NIC: "gpu0", Client: a}, {Node: "h2", NIC: "gpu0", Client: b}}
	done := make(chan error, 1)
	go func() {
		_, err := jobs.RunCollective(t.Context(), jobs.CollectiveSpec{Op: "all_reduce", Ranks: ranks,
			Sizes: []int64{64 << 20}, Iters: 1000, Stall: 2 * time.Second}, nil)
		done <- err
	}()
	eventually(t, "the collective's QPs on h1", func() bool { return nicQPs(t, a) > 0 })
	time.Sleep(300 * time.Millisecond)
	stopB() // h2 dies mid-run
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the collective finished although h2 died")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the collective did not stop within 30 s of h2's death")
	}
	if n := nicQPs(t, a); n != 0 {
		t.Errorf("h1 keeps %d QPs of the stopped collective", n)
	}
}

// nicQPs sums the live QPs a node reports (nic_qps).
func nicQPs(t *testing.T, c *nodeapi.Client) int {
	t.Helper()
	s, err := c.Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range s {
		if x.Name == "nic_qps" {
			n += int(x.Value)
		}
	}
	return n
}

// initiatorEnv makes the test binary a perf or collective initiator
// (runInitiator) instead of running tests.
const initiatorEnv = "ROCELAB_TEST_INITIATOR"

// runInitiator runs the job kind ("perf" or "collective") between the
// endpoint nodes at the two API sockets until it is killed.
func runInitiator(spec string) int {
	kind, socks, _ := strings.Cut(spec, ":")
	a, b, _ := strings.Cut(socks, ",")
	ca, cb := nodeapi.NewClient(a), nodeapi.NewClient(b)
	from := jobs.NICRef{Node: "h1", NIC: "gpu0", Client: ca}
	to := jobs.NICRef{Node: "h2", NIC: "gpu0", Client: cb}
	var err error
	if kind == "perf" {
		_, err = jobs.RunPerf(context.Background(), from, to, jobs.PerfSpec{Op: "write", Size: 4096, Iterations: 1 << 30, QPs: 8}, nil)
	} else {
		_, err = jobs.RunCollective(context.Background(), jobs.CollectiveSpec{Op: "all_reduce", Ranks: []jobs.NICRef{from, to},
			Sizes: []int64{64 << 20}, Iters: 1 << 20}, nil)
	}
	fmt.Fprintln(os.Stderr, "initiator ended:", err)
	return 1
}

// TestKilledInitiatorLeavesNoQPs: a perf or collective whose initiating
// process is killed with -9 (no cleanup of its own) loses its QPs on both
// nodes once its lease runs out (issue 24: they stayed until a restart).
func TestKilledInitiatorLeavesNoQPs(t *testing.T) {
	for _, kind := range []string{"perf", "collective"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			wa, wb := emu.NewMemWaiter(), emu.NewMemWaiter()
			pa, pb := wa.NewPort(), wb.NewPort()
			emu.Join(pa, pb)
			ca, cb := endpointConfig(dir, 1, []string{hostMAC(2, 0)}), endpointConfig(dir, 2, []string{hostMAC(1, 0)})
			a := startNode(t, ca, wa, []*emu.MemPort{pa})
			b := startNode(t, cb, wb, []*emu.MemPort{pb})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), initiatorEnv+"="+kind+":"+ca.Socket+","+cb.Socket)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the initiator's QPs on both nodes", func() bool { return nicQPs(t, a) > 0 && nicQPs(t, b) > 0 })
			time.Sleep(200 * time.Millisecond)
			cmd.Process.Kill()
			cmd.Wait()
			killed := time.Now()
			for nicQPs(t, a)+nicQPs(t, b) > 0 {
				if time.Since(killed) > jobs.OwnerLease+5*time.Second {
					t.Fatalf("%d and %d QPs left %v after the initiator was killed (lease %v)", nicQPs(t, a), nicQPs(t, b), time.Since(killed).Round(time.Second), jobs.OwnerLease)
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%s: QPs gone %v after the initiator's kill -9", kind, time.Since(killed).Round(100*time.Millisecond))
		})
	}
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(initiatorEnv); spec != "" {
		os.Exit(runInitiator(spec))
	}
	os.Exit(m.Run())
}
