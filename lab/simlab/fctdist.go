package simlab

import (
	"math/bits"
	"slices"

	"github.com/rocelab/rocelab/lab/clock"
)

// exactFCTs is how many completion times a distribution keeps exactly;
// past that it keeps a fixed-size histogram, so a flow's memory does not
// grow with the length of the run.
const exactFCTs = 4096

// fctSub is the number of linear sub-buckets per power of two of the
// histogram: quantiles past exactFCTs are within 1/fctSub (0.8 %).
const fctSubBits = 7

// fctDist is a streaming distribution of durations: exact (every value
// kept) up to exactFCTs values, then a log-linear histogram of bounded
// size (at most 64 << fctSubBits buckets) with exact count, min, max and
// sum. Deterministic: the same values in the same order give the same
// statistics.
type fctDist struct {
	exact    []clock.Duration
	hist     map[uint32]int64 // bucket → count, once past exactFCTs
	n        int64
	min, max clock.Duration
	sum      clock.Duration
}

func (d *fctDist) add(v clock.Duration) {
	v = max(v, 0)
	if d.n == 0 || v < d.min {
		d.min = v
	}
	d.max = max(d.max, v)
	d.n++
	d.sum += v
	if d.hist == nil {
		if len(d.exact) < exactFCTs {
			d.exact = append(d.exact, v)
			return
		}
		d.hist = map[uint32]int64{}
		for _, x := range d.exact {
			d.hist[fctBucket(x)]++
		}
	}
	d.hist[fctBucket(v)]++
}

// fctBucket maps v to its histogram bucket: values below 2^fctSubBits
// are their own bucket; above, the exponent and the fctSubBits bits after
// the leading one.
func fctBucket(v clock.Duration) uint32 {
	u := uint64(v)
	if u < 1<<fctSubBits {
		return uint32(u)
	}
	e := uint32(bits.Len64(u)) - fctSubBits - 1
	return (e+1)<<fctSubBits | uint32(u>>e)&(1<<fctSubBits-1)
}

// fctBucketMid returns a representative value of bucket b (its midpoint).
func fctBucketMid(b uint32) clock.Duration {
	e := b >> fctSubBits
	if e == 0 {
		return clock.Duration(b)
	}
	e--
	lo := uint64(1<<fctSubBits|b&(1<<fctSubBits-1)) << e
	return clock.Duration(lo + (uint64(1)<<e)/2)
}

// stats returns the distribution's summary; exact while every value is
// kept, the quantiles within 1/2^fctSubBits after.
func (d *fctDist) stats() FCTStats {
	if d.n == 0 {
		return FCTStats{}
	}
	if d.hist == nil {
		return fctStats(d.exact)
	}
	keys := make([]uint32, 0, len(d.hist))
	for k := range d.hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	q := func(rank int64) clock.Duration { // value of the rank-th smallest (0-based)
		var c int64
		for _, k := range keys {
			c += d.hist[k]
			if c > rank {
				return min(max(fctBucketMid(k), d.min), d.max)
			}
		}
		return d.max
	}
	n := d.n
	return FCTStats{Count: int(n), Min: d.min, Max: d.max, Median: q(n / 2),
		P99: q(min(n-1, (n*99+99)/100-1)), Mean: d.sum / clock.Duration(n)}
}
