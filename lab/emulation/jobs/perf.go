package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// PerfSpec is one perftest-like run between two NICs; the fields mirror
// simlab.PerfSpec.
type PerfSpec struct {
	Op         string // write (default), read or send
	Latency    bool
	Size       int
	Iterations int
	Duration   clock.Duration // fabric time; > 0 overrides Iterations
	QPs        int
	TxDepth    int
	Mode       endpoint.Mode
	CC         string
	Paths      int
	Seed       uint64
	// Stall is how long (wall clock) the run may make no progress before
	// it stops with ErrStalled (default DefaultStall).
	Stall time.Duration
}

// PerfReport is the outcome of a perf flow: the client's measurements and
// the server's, and the data check over both.
type PerfReport struct {
	From       string             `json:"from"`
	To         string             `json:"to"`
	Mode       endpoint.Mode      `json:"mode"` // in force on the first QP
	Client     nodeapi.PerfResult `json:"client"`
	Server     nodeapi.PerfResult `json:"server"`
	Checked    bool               `json:"checked"`
	WrongBytes int64              `json:"wrong_bytes"`
}

// ErrStopped marks a perf flow stopped before it finished (its context
// ended, FlowOptions.KeepOnCancel): its report holds what it measured
// until then.
var ErrStopped = errors.New("stopped before it finished")

// progressEvery is how often a flow with a progress callback reports.
const progressEvery = 250 * time.Millisecond

// RunPerf creates spec.QPs QP pairs between from (client) and to
// (server), each with a buffer of spec.Size bytes, connects them, runs the
// server and client jobs, stops the server once the client finished (which
// checks what arrived), and deletes the QPs. progress, if set, sees the
// client's result while it runs.
func RunPerf(ctx context.Context, from, to NICRef, spec PerfSpec, progress func(nodeapi.PerfResult)) (PerfReport, error) {
	rep := PerfReport{From: from.NIC, To: to.NIC}
	if spec.QPs <= 0 {
		spec.QPs = 1
	}
	if spec.QPs > nodeapi.MaxQPsPerNIC {
		return rep, fmt.Errorf("perf: %d QPs: at most %d per NIC", spec.QPs, nodeapi.MaxQPsPerNIC)
	}
	if spec.Size <= 0 {
		spec.Size = perftest.DefaultSize
	}
	l := newLease(ctx, from.Client, to.Client)
	defer l.end(ctx, from.Client, to.Client)
	f := &Flow{From: from, To: to}
	q := nodeapi.QPRequest{Mode: spec.Mode, CC: spec.CC, Paths: spec.Paths, Buffer: int64(spec.Size)}
	if err := f.Connect(ctx, spec.QPs, l.qp("", q)); err != nil {
		return rep, fmt.Errorf("perf %s → %s: %w", from, to, err)
	}
	req := nodeapi.PerfRequest{Op: spec.Op, Latency: spec.Latency, Size: spec.Size, Iterations: spec.Iterations,
		Duration: spec.Duration, TxDepth: spec.TxDepth, Seed: spec.Seed}
	rep, err := f.Run(ctx, req, FlowOptions{Progress: progress, Stall: spec.Stall})
	if err != nil {
		return rep, fmt.Errorf("perf %s → %s: %w", from, to, err)
	}
	return rep, nil
}

// Flow is one perf flow between two NICs and the QP pairs it connected:
// Client[i] on From talks to Server[i] on To.
type Flow struct {
	From, To       NICRef
	Client, Server []int
}

// Connect creates n QP pairs for f, each as q asks (its NIC set per
// side), and connects them. Per pair it creates the client's QP, then the
// server's: a QP's number is the next of its NIC's counter and picks its
// UDP source port, hence its ECMP path, so flows connected in the
// simulator's order (simlab.Perf) take the simulator's paths.
func (f *Flow) Connect(ctx context.Context, n int, q nodeapi.QPRequest) error {
	for range n {
		cq, sq := q, q
		cq.NIC, sq.NIC = f.From.NIC, f.To.NIC
		c, err := f.From.Client.CreateQP(ctx, cq)
		if err != nil {
			return fmt.Errorf("qp on %s: %w", f.From, err)
		}
		f.Client = append(f.Client, c.ID)
		s, err := f.To.Client.CreateQP(ctx, sq)
		if err != nil {
			return fmt.Errorf("qp on %s: %w", f.To, err)
		}
		f.Server = append(f.Server, s.ID)
		if _, err := f.From.Client.ConnectQP(ctx, c.ID, nodeapi.ConnectRequest{Remote: s.Conn, RemoteBuffer: s.Buffer}); err != nil {
			return fmt.Errorf("connect %s: %w", f.From, err)
		}
		if _, err := f.To.Client.ConnectQP(ctx, s.ID, nodeapi.ConnectRequest{Remote: c.Conn, RemoteBuffer: c.Buffer}); err != nil {
			return fmt.Errorf("connect %s: %w", f.To, err)
		}
	}
	return nil
}

// Delete deletes f's QPs (within 5 s, whatever ctx says).
func (f *Flow) Delete(ctx context.Context) {
	cctx, cancel := afterwards(ctx)
	defer cancel()
	f.From.Client.DeleteQPs(cctx, nodeapi.DeleteQPsRequest{IDs: f.Client})
	f.To.Client.DeleteQPs(cctx, nodeapi.DeleteQPsRequest{IDs: f.Server})
}

// FlowOptions are how Flow.Run watches its flow.
type FlowOptions struct {
	// Progress, if set, sees the client's result while it runs (every
	// 250 ms of wall clock).
	Progress func(nodeapi.PerfResult)
	// Started, if set, learns the client's job once it runs.
	Started func(clientJob int)
	// Stall is how long the flow may make no progress before Run stops
	// it with ErrStalled: 0 is DefaultStall, below 0 never.
	Stall time.Duration
	// KeepOnCancel has a flow whose ctx ends stop its client and report
	// what it completed, with an error wrapping ErrStopped (its data
	// check is void: messages cut short leave buffers half written).
	// Without it the flow fails.
	KeepOnCancel bool
}

// Run starts the server and the client job of connected flow f (req's
// role and QPs set per side), waits for the client to finish, stops the
// server (which checks what arrived) and returns both sides' results. Its
// errors do not name the flow: the caller does.
func (f *Flow) Run(ctx context.Context, req nodeapi.PerfRequest, o FlowOptions) (PerfReport, error) {
	rep := PerfReport{From: f.From.NIC, To: f.To.NIC}
	sreq, creq := req, req
	sreq.Role, sreq.QPs = "server", f.Server
	creq.Role, creq.QPs = "client", f.Client
	sjob, err := f.To.Client.StartPerf(ctx, sreq)
	if err != nil {
		return rep, fmt.Errorf("server on %s: %w", f.To, err)
	}
	stop := func(c *nodeapi.Client, job int) (nodeapi.JobStatus, error) {
		sctx, cancel := afterwards(ctx)
		defer cancel()
		return c.StopJob(sctx, job)
	}
	stopServer := func() (nodeapi.JobStatus, error) { return stop(f.To.Client, sjob.ID) }
	st, err := f.From.Client.StartPerf(ctx, creq)
	if err != nil {
		stopServer()
		return rep, fmt.Errorf("client on %s: %w", f.From, err)
	}
	cid := st.ID
	if o.Started != nil {
		o.Started(cid)
	}
	poll := time.Second
	if o.Progress != nil {
		poll = progressEvery
	}
	watch := newStallWatch(o.Stall)
	var stopped error
	for !st.Finished() {
		if p := st.Perf; p != nil {
			if o.Progress != nil {
				o.Progress(*p)
			}
			if watch.stalled([3]int64{p.Messages, p.RxWire}) {
				stop(f.From.Client, cid)
				stopServer()
				return rep, fmt.Errorf("%w for %v (%d messages done, nothing arriving): a node or link on the path is dead or down, or a fault holds its frames back",
					ErrStalled, watch.limit, p.Messages)
			}
		}
		next, err := f.From.Client.Job(ctx, cid, 1<<62, poll) // waits for the end, or poll
		if err == nil {
			st = next
			continue
		}
		if ctx.Err() == nil || !o.KeepOnCancel {
			stopServer()
			stop(f.From.Client, cid)
			return rep, fmt.Errorf("client on %s: %w", f.From, err)
		}
		// Out of time: stop the client and keep what it completed.
		if next, err = stop(f.From.Client, cid); err != nil {
			stopServer()
			return rep, fmt.Errorf("stop client on %s: %w", f.From, err)
		}
		st, stopped = next, ErrStopped
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
		rep.Client.Checked, rep.Client.WrongBytes = false, 0
		rep.Server.Checked, rep.Server.WrongBytes = false, 0
	case st.State == nodeapi.JobFailed:
		return rep, fmt.Errorf("client on %s: %s", f.From, st.Error)
	case serr != nil:
		return rep, fmt.Errorf("server on %s: %w", f.To, serr)
	case ss.State == nodeapi.JobFailed:
		return rep, fmt.Errorf("server on %s: %s", f.To, ss.Error)
	}
	if len(f.Client) > 0 {
		qctx, cancel := afterwards(ctx)
		if qi, err := f.From.Client.QP(qctx, f.Client[0]); err == nil {
			rep.Mode = qi.Mode
		}
		cancel()
	}
	rep.Checked = rep.Client.Checked || rep.Server.Checked
	rep.WrongBytes = rep.Client.WrongBytes + rep.Server.WrongBytes
	return rep, stopped
}

// Estimate says how long spec will take in wall-clock time on a NIC of
// rate in a lab of scale k, when that is 5 s or more ("" otherwise, and
// for latency tests): the fabric time its bytes take at line rate (or its
// duration), times k.
func Estimate(spec PerfSpec, rate clock.Rate, scale int) string {
	if spec.Latency || rate <= 0 || scale <= 0 {
		return ""
	}
	fabric := spec.Duration
	what := fmt.Sprintf("%v of fabric time", spec.Duration)
	if fabric <= 0 {
		bits := float64(spec.Iterations) * float64(max(spec.QPs, 1)) * float64(spec.Size) * 8
		fabric = clock.Duration(bits / float64(rate) * float64(clock.Second))
		what = fmt.Sprintf("%d × %d B on %d QPs at %v is at least %v of fabric time", spec.Iterations, spec.Size, max(spec.QPs, 1), rate, fabric)
	}
	wall := time.Duration(fabric.Seconds() * float64(scale) * float64(time.Second))
	if wall < 5*time.Second {
		return ""
	}
	return fmt.Sprintf("expect about %v of wall time or more: %s, × %d (the lab's scale)", wall.Round(time.Second), what, scale)
}
