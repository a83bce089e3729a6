package rdmacomm

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// Pairs selects which ranks get a connected QP pair.
type Pairs uint8

// Connection patterns.
const (
	// Ring connects every rank r with r+1 mod n (ring collectives).
	Ring Pairs = iota
	// All connects every pair of ranks (all-to-all): n(n-1) QPs.
	All
	// OnDemand connects a pair at its first write and, when a rank has
	// more than Options.MaxPairs pairs, destroys its least recently used
	// idle ones (no write outstanding either way). An all-to-all across
	// thousands of ranks then holds a few QPs per rank instead of one per
	// peer, as an NCCL proxy connects peers lazily. Connecting takes no
	// fabric time here (no connection manager is modelled).
	OnDemand
)

// DefaultMaxPairs is the number of connected pairs per rank OnDemand keeps
// before it destroys idle ones.
const DefaultMaxPairs = 16

// DefaultRecvDepth is how many receive WRs each QP keeps posted.
const DefaultRecvDepth = 256

// onDemandRecvDepth is the default under OnDemand, where QPs come and go
// by the thousand: two receives a write, reposted as they complete, for a
// writer that keeps up to 16 writes in flight to this peer (the
// collective engine's window is 8 by default).
const onDemandRecvDepth = 32

// Options configure a Transport. Zero fields take the defaults named on them.
type Options struct {
	// NICs is the NIC of each rank; distinct NICs, len(NICs) ranks.
	// Completions that a failing post would report from inside Write are
	// deferred on the rank's NIC's scheduler (NIC.Scheduler), so ranks on
	// different engines of a partitioned simulation never share one.
	NICs []*endpoint.NIC
	// Pairs says which ranks are connected (default Ring).
	Pairs Pairs
	// QP is the configuration of every QP (Mode, CC, Paths, …); its CQs are
	// set by the transport.
	QP endpoint.QPConfig
	// RecvDepth is the receive WRs kept posted per QP (default
	// DefaultRecvDepth; two are consumed per write).
	RecvDepth int
	// MaxPairs bounds the connected pairs per rank under OnDemand
	// (default DefaultMaxPairs).
	MaxPairs int
}

// Transport is a collective.Transport over endpoint QPs.
type Transport struct {
	opts  Options
	ranks []*rankRes
	conns map[[2]int]*conn // by (from, to)
	qps   []*endpoint.QP   // every QP created (only the live ones under OnDemand)
	// OnDemand: each rank's connected pairs, least recently used first,
	// the total of pairs ever connected, and the use clock.
	live      [][]*pair
	connected int
	uses      uint64
}

var _ collective.Transport = (*Transport)(nil)

// rankRes is one rank's protection domain and registered memory.
type rankRes struct {
	nic     *endpoint.NIC
	pd      *endpoint.PD
	region  *endpoint.MR // receive region, nil until Listen
	size    int
	arrived collective.ArrivalFunc
	nullSrc *endpoint.MR // payload-free source
	inWrite bool         // inside a Write of this rank: its completions are deferred
	last    *conn        // the connection this rank wrote on last (see lookup)
}

// conn is one direction of a connected QP pair: from's QP toward to.
type conn struct {
	Channel
	t        *Transport
	from, to int
	pair     *pair // OnDemand only
}

// New connects the QPs of the pattern in opts and posts their receives.
func New(opts Options) (*Transport, error) {
	n := len(opts.NICs)
	if n < 2 {
		return nil, fmt.Errorf("rdmacomm: %d ranks, want >= 2", n)
	}
	if opts.RecvDepth <= 0 {
		opts.RecvDepth = DefaultRecvDepth
		if opts.Pairs == OnDemand {
			opts.RecvDepth = onDemandRecvDepth
		}
	}
	if opts.MaxPairs <= 0 {
		opts.MaxPairs = DefaultMaxPairs
	}
	t := &Transport{opts: opts, conns: map[[2]int]*conn{}}
	seen := map[*endpoint.NIC]int{}
	for i, nic := range opts.NICs {
		if nic == nil {
			return nil, fmt.Errorf("rdmacomm: rank %d has no NIC", i)
		}
		if j, ok := seen[nic]; ok {
			return nil, fmt.Errorf("rdmacomm: ranks %d and %d share NIC %s", j, i, nic.Name())
		}
		seen[nic] = i
		r := &rankRes{nic: nic, pd: nic.AllocPD()}
		mr, err := r.pd.RegMRLen(math.MaxUint32, 0)
		if err != nil {
			return nil, fmt.Errorf("rdmacomm: rank %d: %w", i, err)
		}
		r.nullSrc = mr
		t.ranks = append(t.ranks, r)
	}
	t.live = make([][]*pair, n)
	for a := range n {
		for b := a + 1; b < n && opts.Pairs != OnDemand; b++ {
			if opts.Pairs == All || b == a+1 || a == 0 && b == n-1 {
				if err := t.connect(a, b); err != nil {
					return nil, err
				}
			}
		}
	}
	return t, nil
}

// QPs returns every QP the transport created (for statistics); under
// OnDemand the QPs connected now, in (from, to) order.
func (t *Transport) QPs() []*endpoint.QP {
	if t.opts.Pairs != OnDemand {
		return t.qps
	}
	keys := slices.SortedFunc(maps.Keys(t.conns), func(x, y [2]int) int {
		return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
	})
	out := make([]*endpoint.QP, len(keys))
	for i, k := range keys {
		out[i] = t.conns[k].qp
	}
	return out
}

// Connected returns the number of QP pairs connected so far (under
// OnDemand, destroyed ones included) and the most that are connected now
// to any one rank.
func (t *Transport) Connected() (total, maxPerRank int) {
	per := make([]int, len(t.ranks))
	for k := range t.conns {
		per[k[0]]++
	}
	total = len(t.conns) / 2
	if t.opts.Pairs == OnDemand {
		total = t.connected
	}
	return total, slices.Max(per)
}

// connect creates and connects a QP pair between ranks a and b.
func (t *Transport) connect(a, b int) error {
	ca, err := t.newConn(a, b)
	if err != nil {
		return err
	}
	cb, err := t.newConn(b, a)
	if err != nil {
		return err
	}
	if err := ca.qp.Connect(cb.qp.Info()); err != nil {
		return fmt.Errorf("rdmacomm: connect %d→%d: %w", a, b, err)
	}
	if err := cb.qp.Connect(ca.qp.Info()); err != nil {
		return fmt.Errorf("rdmacomm: connect %d→%d: %w", b, a, err)
	}
	for _, c := range []*conn{ca, cb} {
		for range t.opts.RecvDepth {
			if err := c.qp.PostRecv(endpoint.RecvWR{}); err != nil {
				return fmt.Errorf("rdmacomm: post receive %d→%d: %w", c.from, c.to, err)
			}
		}
	}
	return nil
}

// newConn creates rank from's QP toward rank to, with its own CQs.
func (t *Transport) newConn(from, to int) (*conn, error) {
	r := t.ranks[from]
	cfg := t.opts.QP
	cfg.SendCQ, cfg.RecvCQ = r.nic.CreateCQ(0), r.nic.CreateCQ(0)
	cfg.MaxRecvWR = max(cfg.MaxRecvWR, t.opts.RecvDepth)
	qp, err := r.pd.CreateQP(cfg)
	if err != nil {
		return nil, fmt.Errorf("rdmacomm: QP %d→%d: %w", from, to, err)
	}
	c := &conn{Channel: NewChannel(qp), t: t, from: from, to: to}
	cfg.SendCQ.OnCompletion(c.sendDone)
	cfg.RecvCQ.OnCompletion(c.recvDone)
	t.conns[[2]int{from, to}] = c
	if t.opts.Pairs != OnDemand {
		t.qps = append(t.qps, qp)
	}
	return c, nil
}

// Listen implements collective.Transport: it registers rank's region with
// remote write access, replacing the previous one.
func (t *Transport) Listen(rank int, region []byte, size int, arrived collective.ArrivalFunc) {
	r := t.ranks[rank]
	if r.region != nil {
		r.region.Dereg()
		r.region = nil
	}
	r.size, r.arrived = size, arrived
	if size <= 0 {
		return
	}
	var mr *endpoint.MR
	var err error
	if region != nil {
		mr, err = r.pd.RegMR(region[:size], endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
	} else {
		mr, err = r.pd.RegMRLen(uint64(size), endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
	}
	if err != nil {
		// Cannot happen for size > 0; writes to the rank then fail at Write.
		return
	}
	r.region = mr
}

// Write implements collective.Transport: an offset announcement and the
// data, both RDMA WRITE WITH IMMEDIATE, on the QP from→to.
func (t *Transport) Write(w collective.Write, done func(error)) error {
	c := t.lookup(w.From, w.To)
	if c == nil && t.opts.Pairs == OnDemand && w.From != w.To &&
		w.From >= 0 && w.To >= 0 && w.From < len(t.ranks) && w.To < len(t.ranks) {
		var err error
		if c, err = t.connectOnDemand(w.From, w.To); err != nil {
			return err
		}
	}
	if c == nil {
		return fmt.Errorf("rdmacomm: no QP from rank %d to rank %d", w.From, w.To)
	}
	if c.pair != nil {
		t.uses++
		c.pair.used = t.uses
	}
	dst := t.ranks[w.To]
	if dst.arrived == nil {
		return fmt.Errorf("rdmacomm: rank %d has no receive region", w.To)
	}
	if w.Len < 0 || w.Off < 0 || w.Off+w.Len > dst.size || w.Off > math.MaxUint32 {
		return fmt.Errorf("rdmacomm: write [%d,+%d) outside rank %d's %d-byte region", w.Off, w.Len, w.To, dst.size)
	}
	if w.Src != nil && len(w.Src) < w.Len {
		return fmt.Errorf("rdmacomm: write of %d bytes from a %d-byte source", w.Len, len(w.Src))
	}
	var raddr uint64
	var rkey uint32
	if dst.region != nil {
		raddr, rkey = dst.region.Addr, dst.region.RKey
	}
	r := t.ranks[w.From]
	r.inWrite = true
	defer func() { r.inWrite = false }()
	if err := c.Channel.Write(w, r.pd, r.nullSrc, raddr, rkey, done); err != nil {
		return fmt.Errorf("rdmacomm: %w", err)
	}
	return nil
}

// lookup returns the connection from→to, nil if there is none. A rank's
// last one is kept beside it: a ring writes to the same peer every time,
// and hashing the pair for the map was 2 % of a 2,048-rank all-reduce's
// CPU.
func (t *Transport) lookup(from, to int) *conn {
	if from < 0 || from >= len(t.ranks) {
		return nil
	}
	r := t.ranks[from]
	if c := r.last; c != nil && c.to == to {
		return c
	}
	c := t.conns[[2]int{from, to}]
	if c != nil {
		r.last = c
	}
	return c
}

// sendDone completes a write on its data WR's completion.
func (c *conn) sendDone(wc endpoint.WC) {
	if r := c.t.ranks[c.from]; r.inWrite {
		r.nic.Scheduler().AfterFunc(0, func() { c.sendDone(wc) })
		return
	}
	c.SendDone(wc, c.from, c.to)
}

// recvDone pairs announcements with data and reports arrivals on the
// receiving rank (c.from is the receiver here: c is its QP toward c.to).
func (c *conn) recvDone(wc endpoint.WC) {
	if r := c.t.ranks[c.from]; r.inWrite {
		r.nic.Scheduler().AfterFunc(0, func() { c.recvDone(wc) })
		return
	}
	off, n, imm, ok := c.RecvDone(wc)
	if r := c.t.ranks[c.from]; ok && r.arrived != nil {
		r.arrived(c.to, off, n, imm)
	}
}
