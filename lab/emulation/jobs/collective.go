package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// CollectiveSpec is one distributed collective over NICs of endpoint
// nodes: Ranks[i] is rank i.
type CollectiveSpec struct {
	Op         string
	Ranks      []NICRef
	Sizes      []int64
	Warmup     int
	Iters      int
	Check      bool
	Seed       uint64
	Type       string
	SliceBytes int
	Window     int
	Mode       endpoint.Mode
	CC         string
	Paths      int
	// ReleaseDelay is how far in the wall-clock future a barrier releases
	// every process, so that they all start at once (default 20 ms).
	ReleaseDelay time.Duration
	// Stall is how long (wall clock) the run may make no progress on any
	// node before it stops with ErrStalled (default DefaultStall).
	Stall time.Duration
	// Tick, if set, sees the iterations every node finished, of all,
	// whenever that changes: progress within a long size.
	Tick func(done, total int)
}

// RunCollective runs spec in four phases: it connects one QP pair per
// pair of ranks that talk (ring neighbours; every pair for all-to-all),
// sets up each node's share and exchanges the receive regions, starts the
// shares, then drives them — releasing every barrier on all nodes at one
// wall-clock instant — and returns one combined result per size (time =
// max over nodes, wrong = sum), calling progress after each size.
func RunCollective(ctx context.Context, spec CollectiveSpec, progress func(collective.Result)) ([]collective.Result, error) {
	op, err := collective.ParseOp(spec.Op)
	if err != nil {
		return nil, err
	}
	if n := len(spec.Ranks); n < 2 {
		return nil, fmt.Errorf("collective: %d ranks, want >= 2", n)
	}
	if spec.ReleaseDelay <= 0 {
		spec.ReleaseDelay = 20 * time.Millisecond
	}
	r := newCollRun(spec)
	r.lease = newLease(ctx, r.clients()...)
	defer r.cleanup(ctx)
	if err := r.connect(ctx, op); err != nil {
		return nil, err
	}
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	return r.drive(ctx, progress)
}

// share is one node's part of a collective: its ranks, its job and QPs.
type share struct {
	c     *nodeapi.Client
	name  string
	req   nodeapi.CollectiveRequest
	job   int
	qps   []int
	st    nodeapi.JobStatus
	alive bool // its job runs
}

// collRun is one collective while it runs.
type collRun struct {
	spec   CollectiveSpec
	shares []*share // nodes in first-rank order
	byNode map[string]*share
	lease  *lease
}

func newCollRun(spec CollectiveSpec) *collRun {
	r := &collRun{spec: spec, byNode: map[string]*share{}}
	for rank, ref := range spec.Ranks {
		sh := r.byNode[ref.Node]
		if sh == nil {
			sh = &share{c: ref.Client, name: ref.Node, req: nodeapi.CollectiveRequest{Op: spec.Op, Ranks: len(spec.Ranks), Sizes: spec.Sizes,
				Warmup: spec.Warmup, Iters: spec.Iters, Check: spec.Check, Seed: spec.Seed, Type: spec.Type,
				SliceBytes: spec.SliceBytes, Window: spec.Window}}
			r.byNode[ref.Node] = sh
			r.shares = append(r.shares, sh)
		}
		sh.req.Local = append(sh.req.Local, nodeapi.LocalRank{Rank: rank, NIC: ref.NIC})
	}
	return r
}

func (r *collRun) clients() []*nodeapi.Client {
	var cs []*nodeapi.Client
	for _, sh := range r.shares {
		cs = append(cs, sh.c)
	}
	return cs
}

// cleanup stops the jobs still running and deletes the run's QPs.
func (r *collRun) cleanup(ctx context.Context) {
	r.lease.stop()
	cctx, cancel := afterwards(ctx)
	defer cancel()
	for _, sh := range r.shares {
		if sh.alive {
			sh.c.StopJob(cctx, sh.job)
		}
		sh.c.DeleteQPs(cctx, nodeapi.DeleteQPsRequest{IDs: sh.qps, Owner: r.lease.owner})
	}
}

// connect creates and connects a QP pair for every pair of ranks that
// talk under op.
func (r *collRun) connect(ctx context.Context, op collective.Op) error {
	n := len(r.spec.Ranks)
	q := r.lease.qp("", nodeapi.QPRequest{Mode: r.spec.Mode, CC: r.spec.CC, Paths: r.spec.Paths})
	for a := range n {
		for b := a + 1; b < n; b++ {
			if op != collective.AllToAll && b != a+1 && (a != 0 || b != n-1) {
				continue
			}
			ra, rb := r.spec.Ranks[a], r.spec.Ranks[b]
			sa, sb := r.byNode[ra.Node], r.byNode[rb.Node]
			f := &Flow{From: ra, To: rb}
			err := f.Connect(ctx, 1, q)
			sa.qps, sb.qps = append(sa.qps, f.Client...), append(sb.qps, f.Server...)
			if err != nil {
				return fmt.Errorf("collective: %w", err)
			}
			sa.req.Conns = append(sa.req.Conns, nodeapi.CollConn{Rank: a, Peer: b, QP: f.Client[0]})
			sb.req.Conns = append(sb.req.Conns, nodeapi.CollConn{Rank: b, Peer: a, QP: f.Server[0]})
		}
	}
	return nil
}

// setup sets up every node's share, exchanges the receive regions and
// starts the shares (each waits at its first barrier).
func (r *collRun) setup(ctx context.Context) error {
	regions := map[int]nodeapi.BufferInfo{}
	for _, sh := range r.shares {
		st, err := sh.c.SetupCollective(ctx, sh.req)
		if err != nil {
			return fmt.Errorf("collective: set up %s: %w", sh.name, err)
		}
		sh.job, sh.alive = st.ID, true
		for rank, b := range st.Collective.Regions {
			regions[rank] = b
		}
	}
	for _, sh := range r.shares {
		var err error
		if sh.st, err = sh.c.StartCollective(ctx, sh.job, nodeapi.CollectiveStart{Regions: regions}); err != nil {
			return fmt.Errorf("collective: start %s: %w", sh.name, err)
		}
	}
	return nil
}

// update is a share's new job status, or why it could not be read.
type update struct {
	sh  *share
	st  nodeapi.JobStatus
	err error
}

// watch follows every share's job in a goroutine each until ctx ends.
func (r *collRun) watch(ctx context.Context) <-chan update {
	updates := make(chan update)
	for _, sh := range r.shares {
		go func() {
			ver := int64(sh.st.Version)
			for {
				st, err := sh.c.Job(ctx, sh.job, ver, 0)
				select {
				case updates <- update{sh, st, err}:
				case <-ctx.Done():
					return
				}
				if err != nil || st.Finished() {
					return
				}
				ver = int64(st.Version)
			}
		}()
	}
	return updates
}

// drive runs the started shares to the end: it combines every size all
// nodes finished, releases a barrier once every node reached it, and
// stops on a failed node, a stall or ctx's end.
func (r *collRun) drive(ctx context.Context, progress func(collective.Result)) ([]collective.Result, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := r.watch(wctx)
	var out []collective.Result
	released, ticked := 0, -1
	watch := newStallWatch(r.spec.Stall)
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	total := len(r.spec.Sizes) * (r.spec.Warmup + r.spec.Iters)
	for {
		done, reached, key, err := r.tally()
		if err != nil {
			return out, err
		}
		if r.spec.Tick != nil && reached != ticked {
			ticked = reached
			r.spec.Tick(min(max(reached-1, 0), total), total)
		}
		if out, err = r.combine(out, progress); err != nil || done == len(r.shares) {
			return out, err
		}
		if reached > released {
			if err := r.release(ctx, released); err != nil {
				return out, err
			}
			released++
			continue
		}
		if watch.stalled(key) {
			return out, fmt.Errorf("collective %s: %w for %v (%d of %d sizes done, nothing arriving on any rank): a node or link between the ranks is dead or down",
				r.spec.Op, ErrStalled, watch.limit, len(out), len(r.spec.Sizes))
		}
		if err := r.next(ctx, updates, poll.C); err != nil {
			return out, err
		}
	}
}

// tally counts the shares done, the barrier every share reached and the
// progress key of the stall watch; a failed share is an error.
func (r *collRun) tally() (done, reached int, key [3]int64, err error) {
	reached = len(r.spec.Sizes)*(r.spec.Warmup+r.spec.Iters) + 1
	for _, sh := range r.shares {
		c := sh.st.Collective
		if sh.st.State == nodeapi.JobFailed {
			return 0, 0, key, fmt.Errorf("collective: %s: %s", sh.name, sh.st.Error)
		}
		if sh.st.State == nodeapi.JobDone {
			done++
			sh.alive = false
		}
		if c == nil {
			reached = 0
			continue
		}
		reached = min(reached, c.Reached)
		key[0] += int64(c.Reached)
		key[1] += int64(len(c.Results))
		key[2] += c.RxWire
	}
	return done, reached, key, nil
}

// combine appends the result of every size all nodes have finished.
func (r *collRun) combine(out []collective.Result, progress func(collective.Result)) ([]collective.Result, error) {
	for len(out) < len(r.spec.Sizes) {
		var rs []collective.Result
		for _, sh := range r.shares {
			if c := sh.st.Collective; c != nil && len(c.Results) > len(out) {
				rs = append(rs, c.Results[len(out)])
			}
		}
		if len(rs) < len(r.shares) {
			break
		}
		res, err := collective.Combine(rs)
		if err != nil {
			return out, err
		}
		out = append(out, res)
		if progress != nil {
			progress(res)
		}
	}
	return out, nil
}

// release releases barrier seq on every node at one instant,
// ReleaseDelay from now.
func (r *collRun) release(ctx context.Context, seq int) error {
	at := time.Now().Add(r.spec.ReleaseDelay).UnixNano()
	for _, sh := range r.shares {
		if _, err := sh.c.ReleaseBarrier(ctx, sh.job, nodeapi.Release{Seq: seq, At: at}); err != nil {
			return fmt.Errorf("collective: release barrier %d on %s: %w", seq, sh.name, err)
		}
	}
	return nil
}

// next waits for a share's new status (or a second: then it reads them
// all) and records it.
func (r *collRun) next(ctx context.Context, updates <-chan update, poll <-chan time.Time) error {
	newer := func(sh *share, st nodeapi.JobStatus) {
		if st.Version >= sh.st.Version || st.Finished() {
			sh.st = st
		}
	}
	select {
	case u := <-updates:
		if u.err != nil {
			return fmt.Errorf("collective: %s: %w", u.sh.name, u.err)
		}
		newer(u.sh, u.st)
	case <-poll:
		for _, sh := range r.shares {
			st, err := sh.c.Job(ctx, sh.job, -1, 0)
			if err != nil {
				return fmt.Errorf("collective: %s: %w", sh.name, err)
			}
			newer(sh, st)
		}
	case <-ctx.Done():
		return errors.Join(ctx.Err(), errors.New("collective: interrupted"))
	}
	return nil
}
