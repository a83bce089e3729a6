package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

type collJob struct {
	ep      *epState
	j       *job
	req     nodeapi.CollectiveRequest
	op      collective.Op
	comm    *collective.Comm
	ranks   map[int]*collRank // local ranks
	conns   map[[2]int]*collConn
	results []collective.Result
	waiting func()
	reached int
	rel     int
	regions map[int]nodeapi.BufferInfo
	// After free: the wire bytes and the communicator's samples when the
	// job ended (ranks, conns and comm are dropped then).
	freed   bool
	wire    int64
	samples []telemetry.Sample
}

type collRank struct {
	nic     int
	mr      *endpoint.MR // fixed receive memory, the largest region
	null    *endpoint.MR // payload-free source
	region  []byte       // the engine's current region, nil in payload-free mode
	size    int
	arrived collective.ArrivalFunc
}

// collConn is local rank from's QP toward peer to (both directions of the
// pair are served by it: sends to to, arrivals from to), speaking
// rdmacomm's write protocol.
type collConn struct {
	rdmacomm.Channel
	c        *collJob
	from, to int
	q        *epQP
	remote   nodeapi.BufferInfo
	inWrite  bool
}

// recvDepth is the receive WRs each collective QP keeps posted (two per
// write).
const recvDepth = 256

func (ep *epState) setupCollective(r *http.Request, req nodeapi.CollectiveRequest) (any, error) {
	op, err := collective.ParseOp(req.Op)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if len(req.Sizes) == 0 || req.Iters < 1 || req.Warmup < 0 {
		return nil, badRequest("want sizes, iters >= 1 and warmup >= 0")
	}
	if len(req.Local) == 0 {
		return nil, badRequest("no local ranks")
	}
	var maxRegion int64
	for _, s := range req.Sizes {
		lay, err := collective.NewLayout(op, req.Ranks, s)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		maxRegion = max(maxRegion, lay.RegionBytes())
	}
	if maxRegion > maxBuffer {
		return nil, badRequest("a %d-byte receive region is too large", maxRegion)
	}
	nics := map[int]int{}
	for _, lr := range req.Local {
		i, err := ep.nicIndex(lr.NIC)
		if err != nil {
			return nil, err
		}
		if lr.Rank < 0 || lr.Rank >= req.Ranks {
			return nil, badRequest("rank %d outside 0..%d", lr.Rank, req.Ranks-1)
		}
		nics[lr.Rank] = i
	}
	var ids []int
	for _, c := range req.Conns {
		ids = append(ids, c.QP)
	}
	// The receive regions (ranks × size for an all-to-all: tens of MiB)
	// are allocated and their pages faulted in here, off the loop
	// goroutine, whose turns would otherwise stall the node's datapath
	// for as long (see allocBuffer).
	regions := make(map[int][]byte, len(req.Local))
	for _, lr := range req.Local {
		regions[lr.Rank] = allocBuffer(int(max(maxRegion, 1)))
	}
	var out nodeapi.JobStatus
	err = ep.do(context.WithoutCancel(r.Context()), func() error {
		j, err := ep.addJob("collective", ids)
		if err != nil {
			return err
		}
		cj := &collJob{ep: ep, j: j, req: req, op: op, ranks: map[int]*collRank{}, conns: map[[2]int]*collConn{}, regions: map[int]nodeapi.BufferInfo{}}
		j.coll, j.state = cj, nodeapi.JobSetup
		fail := func(err error) error {
			ep.end(j, err)
			return badRequest("%v", err)
		}
		for _, lr := range req.Local {
			i := nics[lr.Rank]
			rk := &collRank{nic: i}
			if rk.mr, err = ep.pds[i].RegMR(regions[lr.Rank], endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite); err != nil {
				return fail(err)
			}
			if rk.null, err = ep.pds[i].RegMRLen(math.MaxUint32, 0); err != nil {
				return fail(err)
			}
			cj.ranks[lr.Rank] = rk
			cj.regions[lr.Rank] = nodeapi.BufferInfo{Addr: rk.mr.Addr, RKey: rk.mr.RKey, Len: maxRegion}
		}
		for k, c := range req.Conns {
			rk := cj.ranks[c.Rank]
			q := j.qps[k]
			switch {
			case rk == nil:
				return fail(fmt.Errorf("conn %d: rank %d is not local", k, c.Rank))
			case q.nic != rk.nic:
				return fail(fmt.Errorf("conn %d: qp %d is not on rank %d's NIC", k, q.id, c.Rank))
			case q.qp.State() != endpoint.StateRTS:
				return fail(fmt.Errorf("conn %d: qp %d is %v, not connected", k, q.id, q.qp.State()))
			}
			cc := &collConn{Channel: rdmacomm.NewChannel(q.qp), c: cj, from: c.Rank, to: c.Peer, q: q}
			q.onWC = cc.completion
			for range recvDepth {
				if err := q.qp.PostRecv(endpoint.RecvWR{}); err != nil {
					return fail(err)
				}
			}
			cj.conns[[2]int{c.Rank, c.Peer}] = cc
		}
		ep.bump()
		out = ep.status(j)
		return nil
	})
	return out, err
}

func (ep *epState) startCollective(r *http.Request, req nodeapi.CollectiveStart) (any, error) {
	return ep.jobCall(r, func(j *job) error {
		c := j.coll
		if c == nil || j.state != nodeapi.JobSetup {
			return &httpError{http.StatusConflict, fmt.Errorf("job %d is not a collective in setup", j.id)}
		}
		for k, cc := range c.conns {
			reg, ok := req.Regions[k[1]]
			if !ok {
				return badRequest("no region for rank %d", k[1])
			}
			cc.remote = reg
		}
		typ := collective.Float32
		switch c.req.Type {
		case "", "float":
		case "int32":
			typ = collective.Int32
		default:
			return badRequest("type %q: want float or int32", c.req.Type)
		}
		var local []int
		for rank := range c.ranks {
			local = append(local, rank)
		}
		comm, err := collective.New(c.ep.n.loop, c, collective.Config{
			Ranks: c.req.Ranks, Type: typ, SliceBytes: c.req.SliceBytes, Window: c.req.Window,
			Check: c.req.Check, Seed: c.req.Seed, Local: sortedInts(local), Barrier: c.barrier,
			Offload: c.ep.n.dataWork(),
		})
		if err != nil {
			return badRequest("%v", err)
		}
		c.comm = comm
		j.state = nodeapi.JobRunning
		c.ep.bump()
		c.next(0)
		return nil
	})
}

func sortedInts(s []int) []int {
	m := map[int]bool{}
	for _, v := range s {
		m[v] = true
	}
	return sortedKeys(m)
}

// next runs size i.
func (c *collJob) next(i int) {
	if c.j.finished() {
		return
	}
	if i == len(c.req.Sizes) {
		c.ep.end(c.j, nil)
		return
	}
	c.comm.Run(c.op, c.req.Sizes[i], c.req.Warmup, c.req.Iters, func(res collective.Result, err error) {
		if err != nil {
			c.ep.end(c.j, fmt.Errorf("size %d: %w", c.req.Sizes[i], err))
			return
		}
		c.results = append(c.results, res)
		c.ep.bump()
		c.next(i + 1)
	})
}

func (c *collJob) barrier(_ int, release func()) {
	c.reached++
	c.waiting = release
	c.ep.bump()
}

// release releases barrier seq at fabric time at.
func (c *collJob) release(seq int, at clock.Time) error {
	if seq != c.rel || c.reached <= seq || c.waiting == nil {
		return &httpError{http.StatusConflict, fmt.Errorf("barrier %d: reached %d, released %d", seq, c.reached, c.rel)}
	}
	f := c.waiting
	c.waiting = nil
	c.rel++
	c.ep.n.loop.At(at, func() {
		if !c.j.finished() {
			f()
		}
	})
	return nil
}

// free deregisters the ranks' memory once the job ended and lets go of
// everything but the job's results: a node keeps its last finished jobs
// (addJob), and each held its receive memory, QPs and communicator, a few
// MB per all-reduce that the soak saw pile up.
func (c *collJob) free() {
	if c.freed {
		return
	}
	c.wire = c.rxWire()
	if c.comm != nil {
		c.comm.Collect(func(s telemetry.Sample) { c.samples = append(c.samples, s) })
	}
	for _, rk := range c.ranks {
		if rk.mr != nil {
			rk.mr.Dereg()
		}
		if rk.null != nil {
			rk.null.Dereg()
		}
	}
	c.freed, c.comm, c.ranks, c.conns = true, nil, nil, nil
}

// rxWire is what the job's QPs received.
func (c *collJob) rxWire() int64 {
	if c.freed {
		return c.wire
	}
	var wire int64
	for _, cc := range c.conns {
		wire += cc.q.qp.Stats().RxBytes
	}
	return wire
}

// Collect emits the communicator's samples, or the last ones once freed.
func (c *collJob) Collect(emit func(telemetry.Sample)) {
	if c.comm != nil {
		c.comm.Collect(emit)
		return
	}
	for _, s := range c.samples {
		emit(s)
	}
}

func (c *collJob) abort() {
	c.ep.end(c.j, errors.New("stopped"))
}

func (c *collJob) status() nodeapi.CollectiveStatus {
	return nodeapi.CollectiveStatus{Op: c.op.String(), Sizes: c.req.Sizes, Results: append([]collective.Result{}, c.results...),
		Regions: c.regions, Reached: c.reached, Released: c.rel, RxWire: c.rxWire()}
}

// Listen implements collective.Transport for a local rank: arrivals land in
// the rank's fixed registered memory and are copied into region.
func (c *collJob) Listen(rank int, region []byte, size int, arrived collective.ArrivalFunc) {
	rk := c.ranks[rank]
	if rk == nil {
		return
	}
	rk.region, rk.size, rk.arrived = region, size, arrived
}

// Write implements collective.Transport with rdmacomm's protocol (an
// offset announcement, then the data; rdmacomm.Channel) on the QP from→to;
// done runs on the data's completion.
func (c *collJob) Write(w collective.Write, done func(error)) error {
	if c.freed {
		return errors.New("collective: the job ended")
	}
	cc := c.conns[[2]int{w.From, w.To}]
	if cc == nil {
		return fmt.Errorf("collective: no QP from rank %d to rank %d", w.From, w.To)
	}
	if w.Len < 0 || w.Off < 0 || int64(w.Off+w.Len) > cc.remote.Len || w.Off > math.MaxUint32 {
		return fmt.Errorf("collective: write [%d,+%d) outside rank %d's %d-byte region", w.Off, w.Len, w.To, cc.remote.Len)
	}
	rk := c.ranks[w.From]
	cc.inWrite = true
	defer func() { cc.inWrite = false }()
	if err := cc.Channel.Write(w, c.ep.pds[rk.nic], rk.null, cc.remote.Addr, cc.remote.RKey, done); err != nil {
		return fmt.Errorf("collective: %w", err)
	}
	return nil
}

// completion handles the QP's completions: receives (announcements and
// data from the peer) and the writer's own.
func (cc *collConn) completion(wc endpoint.WC) {
	if cc.inWrite {
		cc.c.ep.n.loop.AfterFunc(0, func() { cc.completion(wc) })
		return
	}
	if wc.Opcode == endpoint.WCRecvWriteImm || wc.Opcode == endpoint.WCRecv {
		cc.received(wc)
		return
	}
	cc.SendDone(wc, cc.from, cc.to)
}

func (cc *collConn) received(wc endpoint.WC) {
	off, n, imm, ok := cc.RecvDone(wc)
	if !ok {
		return
	}
	rk := cc.c.ranks[cc.from]
	if rk == nil {
		return // the job ended
	}
	if rk.region != nil && off >= 0 && off+n <= len(rk.region) && off+n <= len(rk.mr.Buf) {
		copy(rk.region[off:off+n], rk.mr.Buf[off:off+n])
	}
	if rk.arrived != nil {
		rk.arrived(cc.to, off, n, imm)
	}
}
