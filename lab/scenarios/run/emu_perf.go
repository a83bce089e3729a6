package run

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rocelab/rocelab/lab/emulation/jobs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// setupPerf creates and connects the QPs of every perf workload, before
// the run's clock starts, as the simulator numbers them (simlab.Perf):
// workloads in the order they start (ties in file order), each one's
// flows in flow order, per QP the client's, then the server's. A QP's
// number is the next of its NIC's counter and picks its UDP source port,
// hence its ECMP path: created in another order, the flows take other
// paths than in the simulator. Done first, the setup's API calls cost no
// fabric time, and every flow can begin exactly at its workload's start
// (runPerf). A workload whose setup failed keeps the error (perr) and
// fails when it runs.
func (e *emuRun) setupPerf(ctx context.Context) {
	ordered := slices.Clone(e.jobs)
	slices.SortStableFunc(ordered, func(a, b *emuJob) int { return cmp.Compare(a.w.Start, b.w.Start) })
	for _, j := range ordered {
		w := j.w
		if w.Kind != scenario.KindPerf {
			continue
		}
		j.pflows = make([]jobs.Flow, len(j.flows))
		for i, f := range j.flows {
			var err error
			if j.pflows[i].From, err = e.nic(f.From); err == nil {
				j.pflows[i].To, err = e.nic(f.To)
			}
			if err != nil {
				j.perr = err
				break
			}
		}
		if j.perr == nil {
			j.perr = createQPs(ctx, j.pflows, w)
		}
	}
}

// runPerf runs perf workload j.w's flows, set up by setupPerf, on the
// endpoint nodes as the simulator runs them: every flow begins at the
// workload's start (each client is told the instant: PerfRequest.At).
//
// When ctx ends first, the flows still running are stopped and report
// what they completed until then, and runPerf returns an error wrapping
// jobs.ErrStopped.
func (e *emuRun) runPerf(ctx context.Context, j *emuJob) error {
	w, flows := j.w, j.pflows
	defer func() {
		for i := range flows {
			flows[i].Delete(ctx)
		}
	}()
	if j.perr != nil {
		return j.perr
	}
	req := nodeapi.PerfRequest{Op: w.PerfOp.String(), Latency: w.Latency, Size: int(w.Size), Iterations: w.Iters,
		Duration: w.Duration, TxDepth: perfDepth(w), Seed: e.sc.Seed, At: e.nodeTime(w.Start)}
	if w.Duration > 0 {
		req.Iterations = 0
	}
	reps := make([]jobs.PerfReport, len(flows))
	errs := make([]error, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		line := j.flows[i].To.Rate
		if req.Op == "read" {
			line = j.flows[i].From.Rate
		}
		o := jobs.FlowOptions{Started: func(job int) { e.addFlowJob(w.Name, f, job, line, w.Start) }, Stall: -1, KeepOnCancel: true}
		wg.Go(func() { reps[i], errs[i] = flows[i].Run(ctx, req, o) })
	}
	wg.Wait()
	e.mu.Lock()
	j.perf = reps
	e.mu.Unlock()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s → %s: %w", flows[i].From, flows[i].To, err)
		}
		if reps[i].WrongBytes > 0 {
			return fmt.Errorf("%s → %s: data check failed: %d bytes wrong", reps[i].From, reps[i].To, reps[i].WrongBytes)
		}
	}
	return nil
}

// createQPs creates and connects every flow's QPs, in flow order.
func createQPs(ctx context.Context, flows []jobs.Flow, w *scenario.Workload) error {
	q := nodeapi.QPRequest{Mode: w.Mode, CC: ccName(w), Paths: w.Paths, Buffer: w.Size}
	for i := range flows {
		if err := flows[i].Connect(ctx, max(w.QPs, 1), q); err != nil {
			return err
		}
	}
	return nil
}

// ccName is workload w's congestion control as the endpoint nodes take
// it ("none" when unset).
func ccName(w *scenario.Workload) string {
	if w.CC == "" {
		return "none"
	}
	return w.CC
}
