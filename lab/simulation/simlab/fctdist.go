package simlab

import (
	"math"
	"math/bits"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// exactFCTs is how many completion times a distribution keeps exactly;
// past that it keeps a fixed-size histogram, so a flow's memory does not
// grow with the length of the run.
const exactFCTs = 4096

// fctSub is the number of linear sub-buckets per power of two of the
// histogram: quantiles past exactFCTs are within 1/fctSub (0.8 %).
const fctSubBits = 7

// FCTDist is a streaming distribution of durations: exact (every value
// kept) up to exactFCTs values, then a log-linear histogram of bounded
// size (at most 64 << fctSubBits buckets) with exact count, min, max and
// sum. Deterministic: the same values in the same order give the same
// statistics. The zero value is empty and ready to use.
type FCTDist struct {
	exact    []clock.Duration
	hist     map[uint32]int64 // bucket → count, once past exactFCTs
	n        int64
	min, max clock.Duration
	sum      clock.Duration
}

// fctDist is the package's name for FCTDist.
type fctDist = FCTDist

// Add records one duration (negative values count as 0).
func (d *FCTDist) Add(v clock.Duration) { d.add(v) }

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

// toHist moves the exact values into the histogram.
func (d *fctDist) toHist() {
	if d.hist != nil {
		return
	}
	d.hist = map[uint32]int64{}
	for _, x := range d.exact {
		d.hist[fctBucket(x)]++
	}
}

// Merge adds every value of o to d (o is not modified). The result is
// exact while the two together hold at most exactFCTs values.
func (d *FCTDist) Merge(o *FCTDist) {
	if o == nil || o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	d.max = max(d.max, o.max)
	d.n += o.n
	d.sum += o.sum
	if d.hist == nil && o.hist == nil && len(d.exact)+len(o.exact) <= exactFCTs {
		d.exact = append(d.exact, o.exact...)
		return
	}
	d.toHist()
	if o.hist == nil {
		for _, x := range o.exact {
			d.hist[fctBucket(x)]++
		}
		return
	}
	for b, c := range o.hist {
		d.hist[b] += c
	}
}

// Count returns the number of values recorded.
func (d *FCTDist) Count() int64 { return d.n }

// Stats returns the distribution's summary (see stats).
func (d *FCTDist) Stats() FCTStats { return d.stats() }

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the
// ceil(q·n)-th smallest value, exact while every value is kept and within
// 1/2^fctSubBits after; 0 when empty.
func (d *FCTDist) Quantile(q float64) clock.Duration {
	if d.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q*float64(d.n))) - 1
	rank = min(max(rank, 0), d.n-1)
	if d.hist == nil {
		s := slices.Clone(d.exact)
		slices.Sort(s)
		return s[rank]
	}
	return d.rank(rank)
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
	q, n := d.rank, d.n
	return FCTStats{Count: int(n), Min: d.min, Max: d.max, Median: q(n / 2),
		P99: q(min(n-1, (n*99+99)/100-1)), Mean: d.sum / clock.Duration(n)}
}

// rank returns the histogram's value of the rank-th smallest value
// (0-based): its bucket's midpoint, clamped to [min, max].
func (d *fctDist) rank(rank int64) clock.Duration {
	keys := make([]uint32, 0, len(d.hist))
	for k := range d.hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var c int64
	for _, k := range keys {
		c += d.hist[k]
		if c > rank {
			return min(max(fctBucketMid(k), d.min), d.max)
		}
	}
	return d.max
}
