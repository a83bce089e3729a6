package flowsim

import (
	"fmt"
	"math"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/wire"
)

// Ring collectives without events: when every QP of a ring goes at a fixed
// rate, the collective engine's schedule follows from a recurrence, write
// by write, with no event queue, no callbacks and no rate updates. A
// 24,576-GPU hierarchical all-reduce makes 151 million writes in its
// rails' rings (2 × 3,071 steps per rank, whatever the size): the engine
// at ~3 µs a write takes minutes, the recurrence a second.
//
// The recurrence is the engine's ring, as endpoint/collective runs it:
// chunk c is cut into slices, slice j of the chunk a rank sends at step s
// is posted when slice j of step s−1 arrived from the rank before (step
// 0: at the start) and the write Window writes earlier completed; its QP
// sends its writes one after the other at its rate; a write lands its
// path's one-way latency after its last byte left and completes the
// return latency later; the collective ends with its last completion.
//
// The rates are what the flow mode would give each QP if its writes
// never overlapped another's on a link (RingRate "alone": its narrowest
// link), or if every QP of the phase were sending at once ("shared": the
// max-min rates of all of them). Rings whose writes are short against the
// path latency — the rails of a large cluster — overlap rarely: "alone"
// is the flow mode's answer up to those overlaps.

// ringEdge is the QP from a rank to the next: its rate in bits per second,
// its latencies, and its NIC's payload MTU.
type ringEdge struct {
	rate         float64
	oneWay, back clock.Duration
	mtu          int
}

// ringConfig is what ringEnd needs of a communicator.
type ringConfig struct {
	op            collective.Op
	size          int64
	slice, window int
}

// ringEnd returns when a ring collective (all-reduce, reduce-scatter or
// all-gather) over edges (edges[r]: rank r to rank r+1 mod n), started at
// t0, ends.
func ringEnd(cfg ringConfig, edges []ringEdge, t0 clock.Time) (clock.Time, error) {
	n := len(edges)
	lay, err := collective.NewLayout(cfg.op, n, cfg.size)
	if err != nil {
		return 0, err
	}
	var steps, nRS int
	switch cfg.op {
	case collective.AllReduce:
		steps, nRS = 2*(n-1), n-1
	case collective.ReduceScatter:
		steps, nRS = n-1, n-1
	case collective.AllGather:
		steps = n - 1
	default:
		return 0, fmt.Errorf("ring: %v is not a ring collective", cfg.op)
	}
	for _, e := range edges {
		if e.rate <= 0 {
			return 0, fmt.Errorf("ring: a QP has no rate")
		}
	}
	const elem = 4
	sliceElems := int64(cfg.slice / elem)
	// Chunk c's length in elements (the engine's cut: sizes differ by at
	// most one), and the most slices a chunk has.
	chunkLen := make([]int64, n)
	perChunk := 1
	for c := range n {
		chunkLen[c] = lay.Count*int64(c+1)/int64(n) - lay.Count*int64(c)/int64(n)
		perChunk = max(perChunk, int((chunkLen[c]+sliceElems-1)/sliceElems))
	}
	// A write's time on the wire, by edge, for the last two lengths seen
	// (a ring's slices come in two or three lengths).
	type serCache struct {
		elems [2]int64
		d     [2]clock.Duration
	}
	cache := make([]serCache, n)
	ser := func(r int, elems int64) clock.Duration {
		c := &cache[r]
		switch elems {
		case c.elems[0]:
			return c.d[0]
		case c.elems[1]:
			return c.d[1]
		}
		e := &edges[r]
		bytes := wire.MessageOnWire(int(elems*elem), e.mtu, wire.RETHLen) + wire.ImmDtLen
		d := clock.Duration(math.Ceil(float64(bytes) * 8 / e.rate * float64(clock.Second)))
		c.elems[1], c.d[1] = c.elems[0], c.d[0]
		c.elems[0], c.d[0] = elems, d
		return d
	}
	w := cfg.window
	// By rank: arrivals of the previous step's slices (from the rank
	// before), this step's, the end of its QP's last write, and the
	// completions of its last w writes (a ring; t0 before there are w),
	// with the slot of the next.
	prev := make([]clock.Time, n*perChunk)
	next := make([]clock.Time, n*perChunk)
	lastEnd := make([]clock.Time, n)
	done := make([]clock.Time, n*w)
	for i := range done {
		done[i] = t0
	}
	slot := make([]int, n)
	end := t0
	// write posts rank r's next write, of d on the wire, no earlier than
	// post, and returns when it lands.
	write := func(r int, post clock.Time, d clock.Duration) clock.Time {
		e := &edges[r]
		sl := &done[r*w+slot[r]]
		if slot[r]++; slot[r] == w {
			slot[r] = 0
		}
		last := max(post, *sl, lastEnd[r]) + clock.Time(d)
		lastEnd[r] = last
		landed := last + clock.Time(e.oneWay)
		*sl = landed + clock.Time(e.back)
		return landed
	}
	// firstChunk is the chunk rank 0 sends at step s; rank r sends the
	// r-th after it.
	firstChunk := func(s int) int {
		c := -(s - nRS)
		if s < nRS {
			c = -1 - s
		}
		return ((c % n) + n) % n
	}
	if perChunk == 1 {
		// One write a chunk (the rails of a large cluster): its time on
		// the wire by edge and chunk length, read from two tables.
		short := lay.Count / int64(n)
		serShort, serLong := make([]clock.Duration, n), make([]clock.Duration, n)
		for r := range n {
			if short > 0 {
				serShort[r] = ser(r, short)
			}
			serLong[r] = ser(r, short+1)
		}
		for s := range steps {
			c := firstChunk(s)
			for r := range n {
				length := chunkLen[c]
				if c++; c == n {
					c = 0
				}
				if length == 0 {
					continue
				}
				d := serShort[r]
				if length > short {
					d = serLong[r]
				}
				post := t0
				if s > 0 {
					post = prev[r]
				}
				to := r + 1
				if to == n {
					to = 0
				}
				next[to] = write(r, post, d)
			}
			prev, next = next, prev
		}
	} else {
		for s := range steps {
			c := firstChunk(s)
			for r := range n {
				length := chunkLen[c]
				if c++; c == n {
					c = 0
				}
				to := r + 1
				if to == n {
					to = 0
				}
				for j := 0; int64(j)*sliceElems < length; j++ {
					post := t0
					if s > 0 {
						post = prev[r*perChunk+j]
					}
					next[to*perChunk+j] = write(r, post, ser(r, min(sliceElems, length-int64(j)*sliceElems)))
				}
			}
			prev, next = next, prev
		}
	}
	for _, d := range done {
		end = max(end, d)
	}
	return end, nil
}
