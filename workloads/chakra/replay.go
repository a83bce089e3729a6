package chakra

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// Options configures a replay.
type Options struct {
	Sched clock.Scheduler // the only source of time
	Comm  Comm
	// Groups gives the members of each process group (pg_name; "" for
	// collectives that name none). nil infers them: a group's members are
	// the ranks whose traces hold a collective in it.
	Groups map[string][]int
	// OnDone, when set, is called once every rank completed its last node.
	OnDone func()
	// Roofline, when set, times GPU compute nodes as ASTRA-sim's roofline
	// does instead of by their duration_micros.
	Roofline *Roofline
}

// Roofline is a GPU's compute model, as ASTRA-sim's (its system
// configuration's peak-perf and local-mem-bw): a compute node of num_ops
// operations on tensor_size bytes runs at min(MemBytesPerSec ×
// num_ops/tensor_size, PeakOpsPerSec) operations a second. A node without
// a tensor_size completes at once (ASTRA-sim skips it); a CPU node
// (is_cpu_op) keeps its duration_micros.
type Roofline struct {
	PeakOpsPerSec  float64
	MemBytesPerSec float64 // 0: compute-bound, every node at the peak
}

// Time returns how long compute node n takes under the roofline.
func (rl *Roofline) Time(n *Node) clock.Duration {
	if n.CPUOp {
		return n.Duration
	}
	if n.TensorSize == 0 || n.NumOps == 0 || rl.PeakOpsPerSec <= 0 {
		return 0
	}
	perf := rl.PeakOpsPerSec
	if rl.MemBytesPerSec > 0 {
		perf = min(perf, rl.MemBytesPerSec*float64(n.NumOps)/float64(n.TensorSize))
	}
	return clock.Duration(float64(n.NumOps) / perf * float64(clock.Second))
}

// computeTime is how long compute node n takes in this replay.
func (o *Options) computeTime(n *Node) clock.Duration {
	if o.Roofline != nil {
		return o.Roofline.Time(n)
	}
	return n.Duration
}

// Replay is a replay in progress. It lives on the scheduler's goroutine.
type Replay struct {
	opt     Options
	t0      clock.Time
	ranks   []*rankRun
	member  map[string]map[int]int // group → rank → position in its member list
	colls   map[string][]*collMatch
	msgs    map[msgKey]*msgMatch
	streams map[string]*stream // by process group
	work    []nodeAt           // completed nodes not yet propagated
	busy    bool               // draining work
	left    int                // ranks not finished
	errs    []error
}

type nodeAt struct{ rank, node int }

type rankRun struct {
	tr       *Trace
	waiting  []int   // by node: dependencies not completed; -1 once it completed
	children [][]int // by node: nodes that depend on it
	spans    []Span  // by node, absolute times
	stream   []int   // compute nodes issued, not started
	busy     bool    // the compute stream runs a node
	left     int     // nodes not completed
	collSeq  map[string]int
}

type collMatch struct {
	nodes   []int // by member position: node index, -1 until issued
	arrived int
}

// stream is a process group's collectives: one runs at a time, in the
// order they matched, as NCCL runs a communicator's operations on its one
// stream.
type stream struct {
	queue []*pendingColl
	busy  bool
}

type pendingColl struct {
	c     *Collective
	nodes []int // by member position
}

type msgKey struct {
	src, dst int
	tag      int64
}

type msgMatch struct {
	sends, recvs []int // node indices issued, not matched
	seq          int
}

// Start begins replaying traces (one per rank, by rank) at opt.Sched's
// Now: it issues every node without dependencies and returns. The
// scheduler's callbacks do the rest; call Result once they ran out.
func Start(traces []*Trace, opt Options) (*Replay, error) {
	if opt.Sched == nil || opt.Comm == nil {
		return nil, errors.New("chakra: a replay needs a Sched and a Comm")
	}
	r := &Replay{opt: opt, t0: opt.Sched.Now(), colls: map[string][]*collMatch{}, msgs: map[msgKey]*msgMatch{}, streams: map[string]*stream{}}
	groups := opt.Groups
	if groups == nil {
		groups = inferGroups(traces)
	}
	r.member = map[string]map[int]int{}
	for g, ranks := range groups {
		ranks = slices.Sorted(slices.Values(ranks))
		r.member[g] = map[int]int{}
		for i, rk := range ranks {
			r.member[g][rk] = i
		}
	}
	for rank, t := range traces {
		if t.Rank != rank {
			return nil, fmt.Errorf("chakra: trace %d is %s's, of rank %d", rank, t.File, t.Rank)
		}
		rr := &rankRun{tr: t, waiting: make([]int, len(t.Nodes)), children: make([][]int, len(t.Nodes)),
			spans: make([]Span, len(t.Nodes)), left: len(t.Nodes), collSeq: map[string]int{}}
		for i, n := range t.Nodes {
			rr.spans[i] = Span{Node: n.Ref(), Kind: n.Kind}
			if n.Kind == Coll {
				rr.spans[i].Op = n.CollType.String()
			}
			t.deps(n, func(p int) {
				rr.waiting[i]++
				rr.children[p] = append(rr.children[p], i)
			})
			if n.Kind == Coll {
				if _, ok := r.member[n.Group][rank]; !ok {
					return nil, fmt.Errorf("chakra: %s: %s: rank %d is not a member of process group %q", t.File, n.Ref(), rank, n.Group)
				}
			}
		}
		r.ranks = append(r.ranks, rr)
		if rr.left > 0 {
			r.left++
		}
	}
	r.busy = true
	for rank, rr := range r.ranks {
		var ready []int
		for i, w := range rr.waiting {
			if w == 0 {
				ready = append(ready, i)
			}
		}
		r.issue(rank, ready)
	}
	r.drain()
	if r.left == 0 && opt.OnDone != nil {
		opt.OnDone()
	}
	return r, nil
}

// inferGroups returns, for each process group named by a collective, the
// ranks whose traces hold a collective in it.
func inferGroups(traces []*Trace) map[string][]int {
	groups := map[string][]int{}
	for rank, t := range traces {
		for _, n := range t.Nodes {
			if n.Kind == Coll && !slices.Contains(groups[n.Group], rank) {
				groups[n.Group] = append(groups[n.Group], rank)
			}
		}
	}
	return groups
}

// issue issues the ready nodes of rank, in ascending id order (the order
// of Chakra's feeder's queue of dependency-free nodes).
func (r *Replay) issue(rank int, ready []int) {
	rr := r.ranks[rank]
	slices.SortFunc(ready, func(a, b int) int { return cmpID(rr.tr.Nodes[a].ID, rr.tr.Nodes[b].ID) })
	now := r.opt.Sched.Now()
	for _, i := range ready {
		n := rr.tr.Nodes[i]
		rr.spans[i].Issued = now
		switch n.Kind {
		case Compute:
			rr.stream = append(rr.stream, i)
			r.kick(rank)
		case Coll:
			r.collective(rank, i)
		case Send, Recv:
			r.message(rank, i)
		default: // memory and metadata
			rr.spans[i].Start = now
			if n.Duration > 0 {
				r.opt.Sched.AfterFunc(n.Duration, func() { r.complete(rank, i) })
			} else {
				r.work = append(r.work, nodeAt{rank, i})
			}
		}
	}
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// kick starts the next compute node of rank when its stream is idle.
func (r *Replay) kick(rank int) {
	rr := r.ranks[rank]
	if rr.busy || len(rr.stream) == 0 {
		return
	}
	i := rr.stream[0]
	rr.stream = rr.stream[1:]
	rr.busy = true
	rr.spans[i].Start = r.opt.Sched.Now()
	r.opt.Sched.AfterFunc(r.opt.computeTime(rr.tr.Nodes[i]), func() {
		rr.busy = false
		r.complete(rank, i)
		r.kick(rank)
	})
}

// collective matches rank's collective node i with the other members'.
func (r *Replay) collective(rank, i int) {
	rr := r.ranks[rank]
	n := rr.tr.Nodes[i]
	seq := rr.collSeq[n.Group]
	rr.collSeq[n.Group]++
	members := r.member[n.Group]
	for len(r.colls[n.Group]) <= seq {
		m := &collMatch{nodes: make([]int, len(members))}
		for k := range m.nodes {
			m.nodes[k] = -1
		}
		r.colls[n.Group] = append(r.colls[n.Group], m)
	}
	m := r.colls[n.Group][seq]
	m.nodes[members[rank]] = i
	if m.arrived++; m.arrived < len(members) {
		return
	}
	c := &Collective{Group: n.Group, Seq: seq, Ranks: slices.Sorted(maps.Keys(members))}
	c.Type = r.ranks[c.Ranks[0]].tr.Nodes[m.nodes[0]].CollType
	for _, rk := range c.Ranks {
		o := r.ranks[rk].tr.Nodes[m.nodes[members[rk]]]
		c.Nodes = append(c.Nodes, o.Ref())
		c.Sizes = append(c.Sizes, o.Size)
		if o.CollType != c.Type {
			r.errs = append(r.errs, fmt.Errorf("chakra: process group %q, collective %d: rank %d's %s is %s, rank %d's %s is %s",
				n.Group, seq, c.Ranks[0], c.Nodes[0], c.Type, rk, o.Ref(), o.CollType))
			return
		}
	}
	st := r.streams[n.Group]
	if st == nil {
		st = &stream{}
		r.streams[n.Group] = st
	}
	st.queue = append(st.queue, &pendingColl{c: c, nodes: m.nodes})
	r.runNext(st)
}

// runNext hands st's next collective to the Comm when none of its group
// runs; the collective's spans start now.
func (r *Replay) runNext(st *stream) {
	if st.busy || len(st.queue) == 0 {
		return
	}
	p := st.queue[0]
	st.queue = st.queue[1:]
	st.busy = true
	now := r.opt.Sched.Now()
	for k, rk := range p.c.Ranks {
		r.ranks[rk].spans[p.nodes[k]].Start = now
	}
	r.opt.Comm.Collective(p.c, func() {
		st.busy = false
		for k, rk := range p.c.Ranks {
			r.complete(rk, p.nodes[k])
		}
		r.runNext(st)
	})
}

// message matches rank's send or receive node i with its other end.
func (r *Replay) message(rank, i int) {
	n := r.ranks[rank].tr.Nodes[i]
	k := msgKey{src: rank, dst: n.Peer, tag: n.Tag}
	if n.Kind == Recv {
		k.src, k.dst = n.Peer, rank
	}
	m := r.msgs[k]
	if m == nil {
		m = &msgMatch{}
		r.msgs[k] = m
	}
	if n.Kind == Send {
		m.sends = append(m.sends, i)
	} else {
		m.recvs = append(m.recvs, i)
	}
	if len(m.sends) == 0 || len(m.recvs) == 0 {
		return
	}
	si, ri := m.sends[0], m.recvs[0]
	m.sends, m.recvs = m.sends[1:], m.recvs[1:]
	src, dst := r.ranks[k.src], r.ranks[k.dst]
	msg := &Message{Src: k.src, Dst: k.dst, Tag: k.tag, Seq: m.seq, Size: src.tr.Nodes[si].Size,
		Send: src.tr.Nodes[si].Ref(), Recv: dst.tr.Nodes[ri].Ref()}
	m.seq++
	now := r.opt.Sched.Now()
	src.spans[si].Start, dst.spans[ri].Start = now, now
	r.opt.Comm.Message(msg, func() {
		r.complete(k.src, si)
		r.complete(k.dst, ri)
	})
}

// complete records that node i of rank completed now and issues what it
// released, unless a completion is already being propagated (then the
// outer drain does it): completions never recurse.
func (r *Replay) complete(rank, i int) {
	r.work = append(r.work, nodeAt{rank, i})
	if !r.busy {
		r.busy = true
		r.drain()
		if r.left == 0 && r.opt.OnDone != nil {
			r.opt.OnDone()
		}
	}
}

// drain propagates completed nodes until none is left.
func (r *Replay) drain() {
	for len(r.work) > 0 {
		w := r.work[0]
		r.work = r.work[1:]
		rr := r.ranks[w.rank]
		rr.spans[w.node].End = r.opt.Sched.Now()
		rr.waiting[w.node] = -1 // completed
		if rr.left--; rr.left == 0 {
			r.left--
		}
		var ready []int
		for _, c := range rr.children[w.node] {
			if rr.waiting[c]--; rr.waiting[c] == 0 {
				ready = append(ready, c)
			}
		}
		if len(ready) > 0 {
			r.issue(w.rank, ready)
		}
	}
	r.busy = false
}
