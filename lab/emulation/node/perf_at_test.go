package node_test

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// TestTimedPerfAt runs a timed write test whose client is told to begin
// at a fabric time ahead (PerfRequest.At), as the scenario runner starts
// a workload's flows: its first post is at that instant exactly, its
// goodput counts what completed within its window over the window (at
// most the line rate, though the queued messages drain after it), and
// its result carries every message's completion time (PerfResult.FCT).
func TestTimedPerfAt(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	const size, depth = 65536, 16
	c, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "h1:gpu0", Buffer: size})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.CreateQP(ctx, nodeapi.QPRequest{NIC: "h2:gpu0", Buffer: size})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConnectQP(ctx, c.ID, nodeapi.ConnectRequest{Remote: s.Conn, RemoteBuffer: s.Buffer}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ConnectQP(ctx, s.ID, nodeapi.ConnectRequest{Remote: c.Conn, RemoteBuffer: c.Buffer}); err != nil {
		t.Fatal(err)
	}
	info, err := a.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms of wall clock ahead at testScale: well past the API calls.
	at := info.FabricTime.Add(500 * clock.Microsecond)
	req := nodeapi.PerfRequest{Op: "write", Size: size, Duration: 200 * clock.Microsecond, TxDepth: depth, Seed: 5}
	sreq, creq := req, req
	sreq.Role, sreq.QPs = "server", []int{s.ID}
	creq.Role, creq.QPs, creq.At = "client", []int{c.ID}, at
	sjob, err := b.StartPerf(ctx, sreq)
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.StartPerf(ctx, creq)
	if err != nil {
		t.Fatal(err)
	}
	if st.Perf != nil && st.Perf.Messages != 0 {
		t.Errorf("client completed %d messages before its start", st.Perf.Messages)
	}
	for !st.Finished() {
		if st, err = a.Job(ctx, st.ID, 1<<62, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.StopJob(ctx, sjob.ID); err != nil {
		t.Fatal(err)
	}
	r := st.Perf
	if r == nil || st.State != nodeapi.JobDone {
		t.Fatalf("client: %s %s", st.State, st.Error)
	}
	t.Logf("start %v (at %v), end %v, %d msgs, avg %.2f Gb/s, fct %+v", r.Start, at, r.End, r.Messages, r.BWAvg, r.FCT.Stats())
	if r.Start != at {
		t.Errorf("first post at %v, want %v", r.Start, at)
	}
	// 200 µs at 100G is 38 messages of 64 KiB: those completed within the
	// window, over the window (the first takes a round trip), not the
	// 16 queued at its end that drained after it.
	inWindow := r.BWAvg * 1e9 * req.Duration.Seconds() / 8 / size
	// (A loaded machine may stall these two loops, which share no clock,
	// so the count is not pinned.)
	whole := float64(int64(inWindow + 0.5))
	if r.BWAvg > 100 || inWindow-whole > 1e-6 || whole-inWindow > 1e-6 || int64(whole) >= r.Messages || r.End <= at.Add(req.Duration) {
		t.Errorf("goodput %.2f Gb/s (%.3f messages in the window of %d, last completion %v): want whole messages within the window over it, at most 100",
			r.BWAvg, inWindow, r.Messages, r.End)
	}
	if r.FCT == nil || r.FCT.Count() != r.Messages {
		t.Fatalf("fct %v for %d messages: want one completion time each", r.FCT, r.Messages)
	}
	fs := r.FCT.Stats()
	// A message waits behind the QP's earlier ones: with 16 in flight at
	// 100G, about 16 × 5.3 µs.
	if fs.Min < 5*clock.Microsecond || fs.Median < 30*clock.Microsecond || fs.Max < fs.P99 || fs.P99 < fs.Median || fs.Max > r.End.Sub(r.Start) {
		t.Errorf("fct %+v: want min at least a message's time on the wire, median its queue's, ordered, none longer than the run", fs)
	}
}
