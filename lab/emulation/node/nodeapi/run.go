package nodeapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/perftest"
)

// NICRef names one NIC of a running endpoint node, for the orchestration
// the CLI does (RunPerf, RunCollective).
type NICRef struct {
	Node   string // the node (host) name
	NIC    string // the NIC name ("host1:gpu0") or port ("gpu0")
	Client *Client
}

func (r NICRef) String() string { return r.NIC }

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
	Mode, CC   string
	Paths      int
	Seed       uint64
	// Stall is how long (wall clock) the run may make no progress before
	// it stops with ErrStalled (default DefaultStall).
	Stall time.Duration
}

// DefaultStall is how long RunPerf and RunCollective wait, in wall-clock
// time, for a job that makes no progress at all: no message completes and
// not one byte arrives on any of its QPs. A live path moves bytes (data,
// acknowledgements, retransmission answers) many times a second at any
// time dilation; a dead node or a down link moves none.
const DefaultStall = 15 * time.Second

// ErrStalled is returned by RunPerf and RunCollective when their job made
// no progress for the stall time: a node or link on the way is dead or
// down (the lab's health says which).
var ErrStalled = errors.New("no progress")

// stallWatch notices a progress key that stopped changing.
type stallWatch struct {
	limit time.Duration
	key   [3]int64
	since time.Time
}

func newStallWatch(limit time.Duration) *stallWatch {
	if limit <= 0 {
		limit = DefaultStall
	}
	return &stallWatch{limit: limit, since: time.Now()}
}

// stalled records key and reports whether it has not changed for the
// limit.
func (w *stallWatch) stalled(key [3]int64) bool {
	now := time.Now()
	if key != w.key {
		w.key, w.since = key, now
		return false
	}
	return now.Sub(w.since) >= w.limit
}

// progressEvery is how often RunPerf reports progress.
const progressEvery = 250 * time.Millisecond

// PerfReport is the outcome of RunPerf: the client's measurements and
// the server's, and the data check over both.
type PerfReport struct {
	From       string     `json:"from"`
	To         string     `json:"to"`
	Mode       string     `json:"mode"` // in force on the first QP
	Client     PerfResult `json:"client"`
	Server     PerfResult `json:"server"`
	Checked    bool       `json:"checked"`
	WrongBytes int64      `json:"wrong_bytes"`
}

// RunPerf creates spec.QPs QP pairs between from (client) and to
// (server), each with a buffer of spec.Size bytes, connects them, runs the
// server and client jobs, stops the server once the client finished (which
// checks what arrived), and deletes the QPs. progress, if set, sees the
// client's result while it runs.
func RunPerf(ctx context.Context, from, to NICRef, spec PerfSpec, progress func(PerfResult)) (PerfReport, error) {
	rep := PerfReport{From: from.NIC, To: to.NIC}
	if spec.QPs <= 0 {
		spec.QPs = 1
	}
	if spec.QPs > MaxQPsPerNIC {
		return rep, fmt.Errorf("perf: %d QPs: at most %d per NIC", spec.QPs, MaxQPsPerNIC)
	}
	if spec.Size <= 0 {
		spec.Size = perftest.DefaultSize
	}
	// The run owns its QPs on both nodes: the cleanup deletes them by
	// owner, also one whose creation was in flight when ctx ended.
	// If this process dies (kill -9), the owner's lease runs out and
	// both nodes delete the QPs themselves.
	owner := newOwner()
	var cids, sids []int
	stopRenew := renewWhileRunning(ctx, owner, from.Client, to.Client)
	defer func() {
		stopRenew()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		from.Client.DeleteQPs(cctx, DeleteQPsRequest{Owner: owner})
		to.Client.DeleteQPs(cctx, DeleteQPsRequest{Owner: owner})
	}()
	qreq := func(nic string) QPRequest {
		return QPRequest{NIC: nic, Mode: spec.Mode, CC: spec.CC, Paths: spec.Paths, Buffer: int64(spec.Size), Owner: owner,
			LeaseMS: OwnerLease.Milliseconds()}
	}
	for range spec.QPs {
		c, err := from.Client.CreateQP(ctx, qreq(from.NIC))
		if err != nil {
			return rep, fmt.Errorf("perf: qp on %s: %w", from, err)
		}
		cids = append(cids, c.ID)
		s, err := to.Client.CreateQP(ctx, qreq(to.NIC))
		if err != nil {
			return rep, fmt.Errorf("perf: qp on %s: %w", to, err)
		}
		sids = append(sids, s.ID)
		if _, err := from.Client.ConnectQP(ctx, c.ID, ConnectRequest{Remote: s.Conn, RemoteBuffer: s.Buffer}); err != nil {
			return rep, fmt.Errorf("perf: connect %s: %w", from, err)
		}
		if _, err := to.Client.ConnectQP(ctx, s.ID, ConnectRequest{Remote: c.Conn, RemoteBuffer: c.Buffer}); err != nil {
			return rep, fmt.Errorf("perf: connect %s: %w", to, err)
		}
	}
	req := PerfRequest{Op: spec.Op, Latency: spec.Latency, Size: spec.Size, Iterations: spec.Iterations,
		Duration: spec.Duration, TxDepth: spec.TxDepth, Seed: spec.Seed}
	sreq := req
	sreq.Role, sreq.QPs = "server", sids
	sjob, err := to.Client.StartPerf(ctx, sreq)
	if err != nil {
		return rep, fmt.Errorf("perf: server on %s: %w", to, err)
	}
	stopServer := func() (JobStatus, error) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return to.Client.StopJob(sctx, sjob.ID)
	}
	creq := req
	creq.Role, creq.QPs = "client", cids
	cjob, err := from.Client.StartPerf(ctx, creq)
	if err != nil {
		stopServer()
		return rep, fmt.Errorf("perf: client on %s: %w", from, err)
	}
	st := cjob
	watch := newStallWatch(spec.Stall)
	stopClient := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		from.Client.StopJob(sctx, cjob.ID)
	}
	for !st.Finished() {
		if st.Perf != nil {
			if progress != nil {
				progress(*st.Perf)
			}
			if watch.stalled([3]int64{st.Perf.Messages, st.Perf.RxWire}) {
				stopClient()
				stopServer()
				return rep, fmt.Errorf("perf %s → %s: %w for %v (%d messages done, nothing arriving): a node or link on the path is dead or down, or a fault holds its frames back",
					from, to, ErrStalled, watch.limit, st.Perf.Messages)
			}
		}
		if st, err = from.Client.Job(ctx, cjob.ID, 1<<62, progressEvery); err != nil { // waits for the end, or progressEvery
			stopServer()
			stopClient()
			return rep, fmt.Errorf("perf: client on %s: %w", from, err)
		}
	}
	if st.Perf != nil {
		rep.Client = *st.Perf
	}
	ss, serr := stopServer()
	if ss.Perf != nil {
		rep.Server = *ss.Perf
	}
	if st.State == JobFailed {
		return rep, fmt.Errorf("perf: client on %s: %s", from, st.Error)
	}
	if serr != nil {
		return rep, fmt.Errorf("perf: server on %s: %w", to, serr)
	}
	if ss.State == JobFailed {
		return rep, fmt.Errorf("perf: server on %s: %s", to, ss.Error)
	}
	if qi, err := from.Client.QP(ctx, cids[0]); err == nil {
		rep.Mode = qi.Mode
	}
	rep.Checked = rep.Client.Checked || rep.Server.Checked
	rep.WrongBytes = rep.Client.WrongBytes + rep.Server.WrongBytes
	return rep, nil
}

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
	Mode, CC   string
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

// RunCollective connects one QP pair per pair of ranks that talk (ring
// neighbours; every pair for all-to-all), sets up each node's share,
// exchanges the receive regions, runs the sizes — releasing every barrier
// on all nodes at one wall-clock instant — and returns one combined result
// per size (time = max over nodes, wrong = sum), calling progress after
// each size.
func RunCollective(ctx context.Context, spec CollectiveSpec, progress func(collective.Result)) ([]collective.Result, error) {
	op, err := collective.ParseOp(spec.Op)
	if err != nil {
		return nil, err
	}
	n := len(spec.Ranks)
	if n < 2 {
		return nil, fmt.Errorf("collective: %d ranks, want >= 2", n)
	}
	if spec.ReleaseDelay <= 0 {
		spec.ReleaseDelay = 20 * time.Millisecond
	}
	// Nodes in first-rank order.
	type share struct {
		c     *Client
		name  string
		req   CollectiveRequest
		job   int
		qps   []int
		st    JobStatus
		seen  int // results seen
		alive bool
	}
	var shares []*share
	byNode := map[string]*share{}
	for r, ref := range spec.Ranks {
		sh := byNode[ref.Node]
		if sh == nil {
			sh = &share{c: ref.Client, name: ref.Node, req: CollectiveRequest{Op: spec.Op, Ranks: n, Sizes: spec.Sizes,
				Warmup: spec.Warmup, Iters: spec.Iters, Check: spec.Check, Seed: spec.Seed, Type: spec.Type,
				SliceBytes: spec.SliceBytes, Window: spec.Window}}
			byNode[ref.Node] = sh
			shares = append(shares, sh)
		}
		sh.req.Local = append(sh.req.Local, LocalRank{Rank: r, NIC: ref.NIC})
	}
	// As a perf run, the collective owns its QPs on every node under a
	// lease: the cleanup deletes them by owner (also one whose creation
	// was in flight), and the nodes delete them themselves when this
	// process is gone.
	owner := newOwner()
	var clients []*Client
	for _, sh := range shares {
		clients = append(clients, sh.c)
	}
	stopRenew := renewWhileRunning(ctx, owner, clients...)
	defer func() {
		stopRenew()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for _, sh := range shares {
			if sh.alive {
				sh.c.StopJob(cctx, sh.job)
			}
			sh.c.DeleteQPs(cctx, DeleteQPsRequest{IDs: sh.qps, Owner: owner})
		}
	}()
	qreq := func(nic string) QPRequest {
		return QPRequest{NIC: nic, Mode: spec.Mode, CC: spec.CC, Paths: spec.Paths, Owner: owner, LeaseMS: OwnerLease.Milliseconds()}
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			if op != collective.AllToAll && b != a+1 && (a != 0 || b != n-1) {
				continue
			}
			ra, rb := spec.Ranks[a], spec.Ranks[b]
			sa, sb := byNode[ra.Node], byNode[rb.Node]
			qa, err := sa.c.CreateQP(ctx, qreq(ra.NIC))
			if err != nil {
				return nil, fmt.Errorf("collective: qp on %s: %w", ra, err)
			}
			sa.qps = append(sa.qps, qa.ID)
			qb, err := sb.c.CreateQP(ctx, qreq(rb.NIC))
			if err != nil {
				return nil, fmt.Errorf("collective: qp on %s: %w", rb, err)
			}
			sb.qps = append(sb.qps, qb.ID)
			if _, err := sa.c.ConnectQP(ctx, qa.ID, ConnectRequest{Remote: qb.Conn}); err != nil {
				return nil, fmt.Errorf("collective: connect %s: %w", ra, err)
			}
			if _, err := sb.c.ConnectQP(ctx, qb.ID, ConnectRequest{Remote: qa.Conn}); err != nil {
				return nil, fmt.Errorf("collective: connect %s: %w", rb, err)
			}
			sa.req.Conns = append(sa.req.Conns, CollConn{Rank: a, Peer: b, QP: qa.ID})
			sb.req.Conns = append(sb.req.Conns, CollConn{Rank: b, Peer: a, QP: qb.ID})
		}
	}
	regions := map[int]BufferInfo{}
	for _, sh := range shares {
		st, err := sh.c.SetupCollective(ctx, sh.req)
		if err != nil {
			return nil, fmt.Errorf("collective: set up %s: %w", sh.name, err)
		}
		sh.job, sh.alive = st.ID, true
		for r, b := range st.Collective.Regions {
			regions[r] = b
		}
	}
	for _, sh := range shares {
		if sh.st, err = sh.c.StartCollective(ctx, sh.job, CollectiveStart{Regions: regions}); err != nil {
			return nil, fmt.Errorf("collective: start %s: %w", sh.name, err)
		}
	}

	// Watch every node's job; release barriers when all reached them.
	type update struct {
		sh  *share
		st  JobStatus
		err error
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan update)
	for _, sh := range shares {
		go func() {
			ver := int64(sh.st.Version)
			for {
				st, err := sh.c.Job(wctx, sh.job, ver, 0)
				select {
				case updates <- update{sh, st, err}:
				case <-wctx.Done():
					return
				}
				if err != nil || st.Finished() {
					return
				}
				ver = int64(st.Version)
			}
		}()
	}
	var out []collective.Result
	released := 0
	watch := newStallWatch(spec.Stall)
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	ticked := -1
	for {
		done, reached := 0, len(spec.Sizes)*(spec.Warmup+spec.Iters)+1
		var key [3]int64
		for _, sh := range shares {
			c := sh.st.Collective
			if sh.st.State == JobFailed {
				return out, fmt.Errorf("collective: %s: %s", sh.name, sh.st.Error)
			}
			if sh.st.State == JobDone {
				done++
				sh.alive = false
			}
			if c != nil {
				reached = min(reached, c.Reached)
				key[0] += int64(c.Reached)
				key[1] += int64(len(c.Results))
				key[2] += c.RxWire
			} else {
				reached = 0
			}
		}
		if total := len(spec.Sizes) * (spec.Warmup + spec.Iters); spec.Tick != nil && reached != ticked {
			ticked = reached
			spec.Tick(min(max(reached-1, 0), total), total)
		}
		// Combine every size all nodes have finished.
		for len(out) < len(spec.Sizes) {
			var rs []collective.Result
			for _, sh := range shares {
				if c := sh.st.Collective; c != nil && len(c.Results) > len(out) {
					rs = append(rs, c.Results[len(out)])
				}
			}
			if len(rs) < len(shares) {
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
		if done == len(shares) {
			return out, nil
		}
		if reached > released {
			at := time.Now().Add(spec.ReleaseDelay).UnixNano()
			for _, sh := range shares {
				if _, err := sh.c.ReleaseBarrier(ctx, sh.job, Release{Seq: released, At: at}); err != nil {
					return out, fmt.Errorf("collective: release barrier %d on %s: %w", released, sh.name, err)
				}
			}
			released++
			continue
		}
		if watch.stalled(key) {
			return out, fmt.Errorf("collective %s: %w for %v (%d of %d sizes done, nothing arriving on any rank): a node or link between the ranks is dead or down",
				spec.Op, ErrStalled, watch.limit, len(out), len(spec.Sizes))
		}
		select {
		case u := <-updates:
			if u.err != nil {
				return out, fmt.Errorf("collective: %s: %w", u.sh.name, u.err)
			}
			if u.st.Version >= u.sh.st.Version || u.st.Finished() {
				u.sh.st = u.st
			}
		case <-poll.C:
			for _, sh := range shares {
				if st, err := sh.c.Job(ctx, sh.job, -1, 0); err == nil && (st.Version >= sh.st.Version || st.Finished()) {
					sh.st = st
				} else if err != nil {
					return out, fmt.Errorf("collective: %s: %w", sh.name, err)
				}
			}
		case <-ctx.Done():
			return out, errors.Join(ctx.Err(), errors.New("collective: interrupted"))
		}
	}
}

// OwnerLease is the lease of a run's QPs (QPRequest.LeaseMS): a run
// renews it every quarter of it; when the run's process is gone, the
// nodes delete its QPs within about this long.
const OwnerLease = 10 * time.Second

// renewWhileRunning renews owner's lease on every client each quarter of
// OwnerLease until the returned stop is called (or ctx ends).
func renewWhileRunning(ctx context.Context, owner string, clients ...*Client) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(OwnerLease / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, c := range clients {
					rctx, rcancel := context.WithTimeout(ctx, OwnerLease/4)
					c.RenewOwner(rctx, owner, OwnerLease)
					rcancel()
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// newOwner returns a fresh QPRequest.Owner for one run.
func newOwner() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}
