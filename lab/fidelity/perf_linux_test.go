package fidelity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/node"
)

// perfFlow is one flow of a perf workload in the emulation.
type perfFlow struct {
	from, to   node.NICRef
	cids, sids []int // client and server QP ids
}

// runPerfFlows runs spec on every flow at once, as node.RunPerf does for
// one flow, with one difference: every QP is created and connected first,
// one flow after the other in flow order (client QPs, then server QPs),
// as the simulator (simlab.Perf) creates them. A QP's number is the next
// of its NIC's counter and picks its UDP source port, hence its ECMP
// path: with one node.RunPerf per flow, launched at once, a NIC that
// both sends one flow and receives another numbers its QPs in whatever
// order the HTTP calls arrived, and the flows take other paths than in
// the simulator (measured: the laptop permutation put 14 MB on a
// different CTSW uplink and flow goodputs were 17–70 % off). It returns
// each flow's client goodput in Gb/s, in flow order.
func runPerfFlows(ctx context.Context, flows []perfFlow, spec node.PerfSpec) (gbps []float64, err error) {
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
	qpReq := func(nic string) node.QPRequest {
		return node.QPRequest{NIC: nic, Mode: spec.Mode, CC: spec.CC, Paths: spec.Paths, Buffer: int64(spec.Size)}
	}
	for i := range flows {
		f := &flows[i]
		for range max(spec.QPs, 1) {
			c, err := f.from.Client.CreateQP(ctx, qpReq(f.from.NIC))
			if err != nil {
				return nil, fmt.Errorf("qp on %s: %w", f.from, err)
			}
			f.cids = append(f.cids, c.ID)
			s, err := f.to.Client.CreateQP(ctx, qpReq(f.to.NIC))
			if err != nil {
				return nil, fmt.Errorf("qp on %s: %w", f.to, err)
			}
			f.sids = append(f.sids, s.ID)
			if _, err := f.from.Client.ConnectQP(ctx, c.ID, node.ConnectRequest{Remote: s.Conn, RemoteBuffer: s.Buffer}); err != nil {
				return nil, fmt.Errorf("connect %s: %w", f.from, err)
			}
			if _, err := f.to.Client.ConnectQP(ctx, s.ID, node.ConnectRequest{Remote: c.Conn, RemoteBuffer: c.Buffer}); err != nil {
				return nil, fmt.Errorf("connect %s: %w", f.to, err)
			}
		}
	}
	req := node.PerfRequest{Op: spec.Op, Size: spec.Size, Iterations: spec.Iterations, Duration: spec.Duration,
		TxDepth: spec.TxDepth, Seed: spec.Seed}
	gbps = make([]float64, len(flows))
	errs := make([]error, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		wg.Go(func() { gbps[i], errs[i] = runPerfFlow(ctx, f, req) })
	}
	wg.Wait()
	return gbps, errors.Join(errs...)
}

// runPerfFlow starts the server and the client job of one connected
// flow, waits for the client to finish, stops the server and returns the
// client's goodput.
func runPerfFlow(ctx context.Context, f perfFlow, req node.PerfRequest) (float64, error) {
	sreq, creq := req, req
	sreq.Role, sreq.QPs = "server", f.sids
	creq.Role, creq.QPs = "client", f.cids
	sjob, err := f.to.Client.StartPerf(ctx, sreq)
	if err != nil {
		return 0, fmt.Errorf("server on %s: %w", f.to, err)
	}
	stopServer := func() (node.JobStatus, error) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return f.to.Client.StopJob(sctx, sjob.ID)
	}
	st, err := f.from.Client.StartPerf(ctx, creq)
	if err != nil {
		stopServer()
		return 0, fmt.Errorf("client on %s: %w", f.from, err)
	}
	cid := st.ID
	for !st.Finished() {
		if st, err = f.from.Client.Job(ctx, cid, 1<<62, time.Second); err != nil {
			stopServer()
			f.from.Client.StopJob(context.WithoutCancel(ctx), cid)
			return 0, fmt.Errorf("client on %s: %w", f.from, err)
		}
	}
	ss, serr := stopServer()
	switch {
	case st.State == node.JobFailed:
		return 0, fmt.Errorf("client on %s: %s", f.from, st.Error)
	case serr != nil:
		return 0, fmt.Errorf("server on %s: %w", f.to, serr)
	case ss.State == node.JobFailed:
		return 0, fmt.Errorf("server on %s: %s", f.to, ss.Error)
	case st.Perf == nil:
		return 0, fmt.Errorf("client on %s: no result", f.from)
	}
	wrong := st.Perf.WrongBytes
	if ss.Perf != nil {
		wrong += ss.Perf.WrongBytes
	}
	if wrong != 0 {
		return 0, fmt.Errorf("%s → %s: %d wrong bytes", f.from, f.to, wrong)
	}
	return st.Perf.BWAvg, nil
}
