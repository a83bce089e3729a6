package collective

import (
	"fmt"
	"sync/atomic"

	"github.com/rocelab/rocelab/core/clock"
)

// send is a write waiting in a rank's queue for a window slot.
type send struct {
	to  int
	src []byte // nil in payload-free mode
	n   int
	off int
	imm uint32
}

// rankState is one rank's buffers and queue during a run.
type rankState struct {
	seen       arrivals // arrivals already received, by arrivalIndex
	in, region []byte   // nil in payload-free mode
	queue      []send
	head       int
	inflight   int
	// All-to-all writes are made as the window takes them (a rank of
	// 2,048 has 2,047 peers): the next is slice a2aJ for peer rank+a2aK.
	a2aK int
	a2aJ int64
	// This iteration: the arrivals the rank still expects, and those plus
	// its writes queued or not yet completed; done once both are zero.
	expect, pending int
	done            bool
	// The rank's writes and their bytes in this run (Comm.Collect).
	writes, bytes uint64
}

// run is one Comm.Run in progress.
type run struct {
	c          *Comm
	lay        Layout
	warmup     int
	iters      int
	done       func(Result, error)
	ranks      []rankState
	sliceElems int64
	perChunk   int // max slices per chunk
	steps      int // ring steps (all-to-all: 1)
	nRS        int // leading reduce-scatter steps

	iter  int
	left  atomic.Int64 // local ranks not done with the iteration; -1 once it ended
	hint  int          // the rank expecting found expecting last
	t0    clock.Time
	total clock.Duration
	wrong int64
	// failed is set once, by the first failure. Ranks keep their own
	// counts (rankState) and only left and failed are shared, so ranks
	// driven from several goroutines (a partitioned simulation, whose
	// coordinator runs the iteration's start and end alone) do not race.
	failed atomic.Bool

	// Distributed mode: between the local end of an iteration and the
	// barrier's release, arrivals of the next iteration (from processes
	// released earlier) are held in early and handled once it starts.
	waiting bool
	early   []early
}

// early is an arrival held until its iteration starts.
type early struct {
	rank, from, off, n int
	imm                uint32
}

func newRun(c *Comm, lay Layout, warmup, iters int, done func(Result, error)) *run {
	n := lay.Ranks
	r := &run{c: c, lay: lay, warmup: warmup, iters: iters, done: done,
		ranks: make([]rankState, n), sliceElems: int64(c.cfg.SliceBytes / elemSize)}
	r.perChunk = int((lay.chunkMax() + r.sliceElems - 1) / r.sliceElems)
	switch lay.Op {
	case AllReduce:
		r.steps, r.nRS = 2*(n-1), n-1
	case ReduceScatter:
		r.steps, r.nRS = n-1, n-1
	case AllGather:
		r.steps = n - 1
	case AllToAll:
		r.steps = 1
	}
	seen := r.steps * r.perChunk
	if lay.Op == AllToAll {
		seen = n * r.perChunk
	}
	for i := range r.ranks {
		if !c.local[i] {
			continue
		}
		st := &r.ranks[i]
		st.seen = newArrivals(seen)
		if c.cfg.Check {
			st.in = make([]byte, lay.InElems()*elemSize)
			st.region = make([]byte, lay.RegionBytes())
		}
	}
	return r
}

// imm packs a ring step and a slice index into an immediate.
func imm(step, slice int) uint32 { return uint32(step)<<stepShift | uint32(slice) }

// slice returns the element range of slice j of chunk c, and whether it
// exists.
func (r *run) slice(c int, j int64) (lo, hi int64, ok bool) {
	clo, chi := r.lay.chunk(c)
	lo = clo + j*r.sliceElems
	if j < 0 || lo >= chi {
		return 0, 0, false
	}
	return lo, min(chi, lo+r.sliceElems), true
}

// mod returns x mod n in [0, n).
func (r *run) mod(x int) int { n := r.lay.Ranks; return ((x % n) + n) % n }

// sendChunk is the chunk rank sends at ring step s: during reduce-scatter
// chunk rank-1-s (so that chunk c is fully reduced at rank c after n-1
// steps), during all-gather the chunk it completed s-nRS steps before.
func (r *run) sendChunk(rank, s int) int {
	if s < r.nRS {
		return r.mod(rank - 1 - s)
	}
	return r.mod(rank - (s - r.nRS))
}

// bytesOf returns buf[lo:hi] in elements, or nil in payload-free mode.
func bytesOf(buf []byte, lo, hi int64) []byte {
	if buf == nil {
		return nil
	}
	return buf[lo*elemSize : hi*elemSize]
}

// numSlices is the number of slices (writes) chunk c is cut into.
func (r *run) numSlices(c int) int {
	lo, hi := r.lay.chunk(c)
	return int((hi - lo + r.sliceElems - 1) / r.sliceElems)
}

// expected is the number of arrivals rank receives in one iteration.
func (r *run) expected(rank int) int {
	if r.lay.Op == AllToAll {
		return (r.lay.Ranks - 1) * r.numSlices(rank)
	}
	from, total := r.mod(rank-1), 0
	for s := range r.steps {
		total += r.numSlices(r.sendChunk(from, s))
	}
	return total
}

// listen registers every local rank's region with the transport.
func (r *run) listen() {
	for i := range r.ranks {
		if !r.c.local[i] {
			continue
		}
		rank := i
		r.c.tr.Listen(rank, r.ranks[i].region, int(r.lay.RegionBytes()), func(from, off, n int, imm uint32) {
			if r.c.run != r || r.failed.Load() {
				return // a stale write of a run that failed
			}
			if r.waiting {
				r.early = append(r.early, early{rank, from, off, n, imm})
				return
			}
			r.arrive(rank, from, off, n, imm)
		})
	}
}

// next starts iteration r.iter: at once (from the scheduler) when every
// rank is local, after the barrier otherwise.
func (r *run) next() {
	c := r.c
	if c.cfg.Barrier == nil {
		c.sched.AfterFunc(0, r.startIter)
		return
	}
	r.waiting = true
	released := false
	c.cfg.Barrier(r.iter, func() {
		if released {
			return
		}
		released = true
		c.sched.AfterFunc(0, r.startIter)
	})
}

// offload runs work off the scheduler (Config.Offload) or inline, then
// then on the scheduler; then is dropped if the run failed meanwhile.
func (r *run) offload(work, then func()) {
	if r.c.cfg.Offload == nil {
		work()
		then()
		return
	}
	r.c.cfg.Offload(work, func() {
		if r.c.run == r && !r.failed.Load() {
			then()
		}
	})
}

// startIter fills the local inputs (Check; off the scheduler with
// Offload) and then starts the iteration. Arrivals are held until it has
// started (r.waiting).
func (r *run) startIter() {
	if r.failed.Load() {
		return
	}
	if !r.c.cfg.Check {
		r.beginIter()
		return
	}
	r.waiting = true
	r.offload(r.fillInputs, r.beginIter)
}

// fillInputs writes iteration r.iter's input of every local rank (Check).
func (r *run) fillInputs() {
	for rank := range r.ranks {
		if r.c.local[rank] {
			for i := range r.lay.InElems() {
				r.c.cfg.Type.putElem(r.ranks[rank].in, i, fill(r.c.cfg.Seed, r.iter, rank, i))
			}
		}
	}
}

// beginIter posts every local rank's first writes and handles the
// arrivals held meanwhile. Regions were cleared at the end of the
// previous iteration.
func (r *run) beginIter() {
	r.waiting = false
	r.t0 = r.c.sched.Now()
	lay, n := r.lay, r.lay.Ranks
	for rank := range r.ranks {
		if !r.c.local[rank] {
			continue
		}
		st := &r.ranks[rank]
		st.expect = r.expected(rank)
		st.pending, st.done = st.expect, false
		st.seen.reset()
		switch lay.Op {
		case AllReduce, ReduceScatter:
			r.enqueueChunk(rank, 0, st.in)
		case AllGather:
			lo, hi := lay.chunk(rank)
			if st.in != nil {
				copy(bytesOf(st.region, lo, hi), st.in)
			}
			r.enqueueChunk(rank, 0, st.region)
		case AllToAll:
			lo, hi := lay.chunk(rank)
			if st.in != nil {
				copy(bytesOf(st.region, lo, hi), bytesOf(st.in, lo, hi))
			}
			st.a2aK, st.a2aJ = 1, 0
			for k := 1; k < n; k++ {
				st.pending += r.numSlices((rank + k) % n) // the writes nextAllToAll will make
			}
		}
	}
	left := int64(0)
	for rank := range r.ranks {
		if st := &r.ranks[rank]; r.c.local[rank] {
			if st.pending == 0 {
				st.done = true
			} else {
				left++
			}
		}
	}
	r.left.Store(left)
	for rank := range r.ranks {
		if r.c.local[rank] {
			r.pump(rank)
		}
	}
	held := r.early
	r.early = nil
	for _, a := range held {
		if r.failed.Load() {
			return
		}
		r.arrive(a.rank, a.from, a.off, a.n, a.imm)
	}
	if r.left.Load() == 0 {
		r.finish()
	}
}

// enqueueChunk queues every slice of rank's ring step s, read from buf.
func (r *run) enqueueChunk(rank, s int, buf []byte) {
	c := r.sendChunk(rank, s)
	for j := int64(0); ; j++ {
		a, b, ok := r.slice(c, j)
		if !ok {
			return
		}
		r.enqueue(rank, send{to: r.mod(rank + 1), src: bytesOf(buf, a, b), n: int((b - a) * elemSize),
			off: int(a * elemSize), imm: imm(s, int(j))})
	}
}

func (r *run) enqueue(rank int, s send) {
	st := &r.ranks[rank]
	st.queue = append(st.queue, s)
	st.pending++
}

// nextAllToAll queues rank's next all-to-all write, if any is left: the
// slices of its block for peer rank+1, then rank+2, … (a shifted order, so
// that ranks do not all start on the same target). The write was counted
// in pending when the iteration started.
func (r *run) nextAllToAll(rank int) bool {
	st := &r.ranks[rank]
	n := r.lay.Ranks
	for st.a2aK > 0 && st.a2aK < n {
		peer := (rank + st.a2aK) % n
		a, b, ok := r.slice(peer, st.a2aJ)
		if !ok {
			st.a2aK, st.a2aJ = st.a2aK+1, 0
			continue
		}
		plo, _ := r.lay.chunk(peer)
		mlo, _ := r.lay.chunk(rank)
		st.queue = append(st.queue, send{to: peer, src: bytesOf(st.in, a, b), n: int((b - a) * elemSize),
			off: int((mlo + a - plo) * elemSize), imm: imm(0, int(st.a2aJ))})
		st.a2aJ++
		return true
	}
	st.a2aK = 0
	return false
}

// pump posts rank's queued writes while its window has room.
func (r *run) pump(rank int) {
	st := &r.ranks[rank]
	for !r.failed.Load() && st.inflight < r.c.cfg.Window && (st.head < len(st.queue) || r.lay.Op == AllToAll && r.nextAllToAll(rank)) {
		s := st.queue[st.head]
		st.queue[st.head] = send{}
		st.head++
		st.inflight++
		st.writes++
		st.bytes += uint64(s.n)
		err := r.c.tr.Write(Write{From: rank, To: s.to, Src: s.src, Len: s.n, Off: s.off, Imm: s.imm}, func(err error) {
			if r.c.run != r || r.failed.Load() {
				return
			}
			if err != nil {
				r.fail(fmt.Errorf("rank %d write to rank %d: %w", rank, s.to, err))
				return
			}
			st.inflight--
			st.pending--
			r.pump(rank)
			r.rankProgress(st)
		})
		if err != nil {
			r.fail(fmt.Errorf("rank %d post write to rank %d: %w", rank, s.to, err))
			return
		}
	}
	if st.head == len(st.queue) {
		st.queue, st.head = st.queue[:0], 0
	}
}

// arrive handles a write that landed in rank's region.
func (r *run) arrive(rank, from, off, n int, im uint32) {
	lay := r.lay
	if from < 0 || from >= lay.Ranks || from == rank {
		r.fail(fmt.Errorf("rank %d: arrival from invalid rank %d", rank, from))
		return
	}
	step, j := int(im>>stepShift), int64(im&(maxSlices-1))
	var c, idx int
	if lay.Op == AllToAll {
		c, idx = from, from*r.perChunk+int(j)
	} else {
		if want := r.mod(rank - 1); from != want {
			r.fail(fmt.Errorf("rank %d: ring arrival from rank %d, want %d", rank, from, want))
			return
		}
		c, idx = r.sendChunk(from, step), step*r.perChunk+int(j)
	}
	a, b, ok := r.slice(c, j)
	if !ok || step >= r.steps {
		r.fail(fmt.Errorf("rank %d: arrival from rank %d with unexpected immediate %#x", rank, from, im))
		return
	}
	// Ring slices land where they sit in the sender's buffer; all-to-all
	// slices of the sender's block for this rank land in block from, which
	// is where slice(from, j) lies since all blocks have the same length.
	dst := a * elemSize
	if int64(off) != dst || int64(n) != (b-a)*elemSize {
		r.fail(fmt.Errorf("rank %d: arrival from rank %d imm %#x at [%d,+%d), want [%d,+%d)",
			rank, from, im, off, n, dst, (b-a)*elemSize))
		return
	}
	st := &r.ranks[rank]
	if st.seen.add(idx) {
		r.fail(fmt.Errorf("rank %d: duplicate arrival from rank %d imm %#x", rank, from, im))
		return
	}
	if lay.Op != AllToAll {
		if st.in != nil && step < r.nRS {
			r.c.cfg.Type.reduceInto(bytesOf(st.region, a, b), bytesOf(st.in, a, b))
		}
		if step+1 < r.steps {
			r.enqueue(rank, send{to: r.mod(rank + 1), src: bytesOf(st.region, a, b), n: n, off: off, imm: imm(step+1, int(j))})
			r.pump(rank)
		}
	}
	st.expect--
	st.pending--
	r.rankProgress(st)
}

// rankProgress counts st done once nothing of its iteration is queued, in
// flight or expected, and ends the iteration when it was the last local
// rank. A rank done stays done: it expects nothing more to forward.
func (r *run) rankProgress(st *rankState) {
	if st.pending != 0 || st.done {
		return
	}
	st.done = true
	if r.left.Add(-1) == 0 {
		r.finish()
	}
}

// expecting is Comm.Expecting for this run. It looks first at the rank
// it found last, which usually still expects.
func (r *run) expecting() bool {
	if r.left.Load() <= 0 || r.failed.Load() {
		return false
	}
	n := len(r.ranks)
	for i := range n {
		if rank := (r.hint + i) % n; r.ranks[rank].expect > 0 {
			r.hint = rank
			return true
		}
	}
	return false
}

// finish ends the iteration: nothing is queued, in flight or expected at
// any local rank.
func (r *run) finish() {
	if r.failed.Load() {
		return
	}
	r.left.Store(-1) // guard against a second call before startIter
	c := r.c
	took := c.sched.Now().Sub(r.t0)
	if r.iter >= r.warmup {
		r.total += took
	}
	c.iterations++
	c.iterTime += took
	c.busBytes += float64(r.lay.Size) * BusFactor(r.lay.Op, r.lay.Ranks)
	if !c.cfg.Check {
		r.endIter()
		return
	}
	var w int64
	r.offload(func() {
		w = r.verify()
		for i := range r.ranks {
			clear(r.ranks[i].region) // stale data must not pass the next check
		}
	}, func() {
		r.wrong = max(r.wrong, w)
		c.wrongTotal += uint64(w)
		r.endIter()
	})
}

// endIter goes on to the next iteration, or ends the run.
func (r *run) endIter() {
	c := r.c
	r.iter++
	if r.iter < r.warmup+r.iters {
		r.next()
		return
	}
	c.retire(r)
	r.done(r.result(), nil)
}

// fail aborts the run; later callbacks of its writes are ignored.
// It leaves the Comm's run in place (Run replaces a failed one), so that
// a failure on one goroutine writes nothing another reads.
func (r *run) fail(err error) {
	if !r.failed.CompareAndSwap(false, true) {
		return
	}
	r.done(Result{}, fmt.Errorf("collective %v: %w", r.lay.Op, err))
}
