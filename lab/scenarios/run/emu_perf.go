package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// errStopped marks a perf flow stopped before it finished (its context
// ended): its report holds what it measured until then.
var errStopped = errors.New("stopped before it finished")

// emuFlow is one flow of an emulated perf workload: its NICs and the QPs
// it created on them.
type emuFlow struct {
	from, to   nodeapi.NICRef
	cids, sids []int // client and server QP ids
}

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
	jobs := slices.Clone(e.jobs)
	slices.SortStableFunc(jobs, func(a, b *emuJob) int { return cmp.Compare(a.w.Start, b.w.Start) })
	for _, j := range jobs {
		w := j.w
		if w.Kind != scenario.KindPerf {
			continue
		}
		j.pflows = make([]emuFlow, len(j.flows))
		for i, f := range j.flows {
			var err error
			if j.pflows[i].from, err = e.nic(f.From); err == nil {
				j.pflows[i].to, err = e.nic(f.To)
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
// errStopped.
func (e *emuRun) runPerf(ctx context.Context, j *emuJob) error {
	w, flows := j.w, j.pflows
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, f := range flows {
			for _, id := range f.cids {
				f.from.Client.DeleteQP(cctx, id)
			}
			for _, id := range f.sids {
				f.to.Client.DeleteQP(cctx, id)
			}
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
	reps := make([]nodeapi.PerfReport, len(flows))
	errs := make([]error, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		line := j.flows[i].To.Rate
		if req.Op == "read" {
			line = j.flows[i].From.Rate
		}
		started := func(job int) { e.addFlowJob(w.Name, f, job, line) }
		wg.Go(func() { reps[i], errs[i] = runPerfFlow(ctx, f, req, started) })
	}
	wg.Wait()
	e.mu.Lock()
	j.perf = reps
	e.mu.Unlock()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s → %s: %w", flows[i].from, flows[i].to, err)
		}
		if reps[i].WrongBytes > 0 {
			return fmt.Errorf("%s → %s: data check failed: %d bytes wrong", reps[i].From, reps[i].To, reps[i].WrongBytes)
		}
	}
	return nil
}

// createQPs creates and connects every flow's QPs, in flow order.
func createQPs(ctx context.Context, flows []emuFlow, w *scenario.Workload) error {
	qpReq := func(nic string) nodeapi.QPRequest {
		return nodeapi.QPRequest{NIC: nic, Mode: w.Mode.String(), CC: ccName(w), Paths: w.Paths, Buffer: w.Size}
	}
	for i := range flows {
		f := &flows[i]
		for range max(w.QPs, 1) {
			c, err := f.from.Client.CreateQP(ctx, qpReq(f.from.NIC))
			if err != nil {
				return fmt.Errorf("qp on %s: %w", f.from, err)
			}
			f.cids = append(f.cids, c.ID)
			s, err := f.to.Client.CreateQP(ctx, qpReq(f.to.NIC))
			if err != nil {
				return fmt.Errorf("qp on %s: %w", f.to, err)
			}
			f.sids = append(f.sids, s.ID)
			if _, err := f.from.Client.ConnectQP(ctx, c.ID, nodeapi.ConnectRequest{Remote: s.Conn, RemoteBuffer: s.Buffer}); err != nil {
				return fmt.Errorf("connect %s: %w", f.from, err)
			}
			if _, err := f.to.Client.ConnectQP(ctx, s.ID, nodeapi.ConnectRequest{Remote: c.Conn, RemoteBuffer: c.Buffer}); err != nil {
				return fmt.Errorf("connect %s: %w", f.to, err)
			}
		}
	}
	return nil
}

// runPerfFlow starts the server and the client job of one connected flow,
// waits for the client to finish (or ctx to end: then it stops the
// client), stops the server (which checks what arrived) and returns both
// sides' results, as nodeapi.RunPerf does.
func runPerfFlow(ctx context.Context, f emuFlow, req nodeapi.PerfRequest, started func(clientJob int)) (nodeapi.PerfReport, error) {
	rep := nodeapi.PerfReport{From: f.from.NIC, To: f.to.NIC}
	bg := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	}
	sreq, creq := req, req
	sreq.Role, sreq.QPs = "server", f.sids
	creq.Role, creq.QPs = "client", f.cids
	sjob, err := f.to.Client.StartPerf(ctx, sreq)
	if err != nil {
		return rep, fmt.Errorf("server on %s: %w", f.to, err)
	}
	stopServer := func() (nodeapi.JobStatus, error) {
		sctx, cancel := bg()
		defer cancel()
		return f.to.Client.StopJob(sctx, sjob.ID)
	}
	st, err := f.from.Client.StartPerf(ctx, creq)
	if err != nil {
		stopServer()
		return rep, fmt.Errorf("client on %s: %w", f.from, err)
	}
	cid := st.ID
	started(cid)
	var stopped error
	for !st.Finished() {
		next, err := f.from.Client.Job(ctx, cid, 1<<62, time.Second)
		if err == nil {
			st = next
			continue
		}
		if ctx.Err() == nil {
			stopServer()
			cctx, cancel := bg()
			f.from.Client.StopJob(cctx, cid)
			cancel()
			return rep, fmt.Errorf("client on %s: %w", f.from, err)
		}
		// Out of time: stop the client and keep what it completed.
		cctx, cancel := bg()
		next, err = f.from.Client.StopJob(cctx, cid)
		cancel()
		if err != nil {
			stopServer()
			return rep, fmt.Errorf("stop client on %s: %w", f.from, err)
		}
		st, stopped = next, errStopped
	}
	if st.Perf != nil {
		rep.Client = *st.Perf
	}
	ss, serr := stopServer()
	if ss.Perf != nil {
		rep.Server = *ss.Perf
	}
	switch {
	case stopped != nil:
		// Messages cut short leave their buffers half written: the data
		// check of a stopped flow means nothing.
		rep.Client.Checked, rep.Client.WrongBytes = false, 0
		rep.Server.Checked, rep.Server.WrongBytes = false, 0
	case st.State == nodeapi.JobFailed:
		return rep, fmt.Errorf("client on %s: %s", f.from, st.Error)
	case serr != nil:
		return rep, fmt.Errorf("server on %s: %w", f.to, serr)
	case ss.State == nodeapi.JobFailed:
		return rep, fmt.Errorf("server on %s: %s", f.to, ss.Error)
	}
	rep.Checked = rep.Client.Checked || rep.Server.Checked
	rep.WrongBytes = rep.Client.WrongBytes + rep.Server.WrongBytes
	return rep, stopped
}

// ccName is workload w's congestion control as the endpoint nodes take
// it ("none" when unset).
func ccName(w *scenario.Workload) string {
	if w.CC == "" {
		return "none"
	}
	return w.CC
}
