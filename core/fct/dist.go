// Package fct summarises completion times: Dist, a streaming
// distribution of durations (exact while small, a bounded log-linear
// histogram after), and Stats, its summary. Both drivers use it — the
// simulator for its perf flows, the emulation's endpoint node for the
// messages of a perf job, which it sends in its result as JSON — so a
// flow's FCT quantiles are computed one way, merged into a job's, and read
// by the expectations' fct(...) the same in both clocks.
package fct

import (
	"math"
	"math/bits"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// exactValues is how many completion times a distribution keeps exactly;
// past that it keeps a fixed-size histogram, so a flow's memory does not
// grow with the length of the run.
const exactValues = 4096

// subBits is log2 of the number of linear sub-buckets per power of two of the
// histogram: quantiles past exactValues are within 2^-subBits (0.8 %).
const subBits = 7

// Dist is a streaming distribution of durations: exact (every value
// kept) up to exactValues values, then a log-linear histogram of bounded
// size (at most 64 << subBits buckets) with exact count, min, max and
// sum. Deterministic: the same values in the same order give the same
// statistics. The zero value is empty and ready to use.
type Dist struct {
	exact    []clock.Duration
	hist     map[uint32]int64 // bucket → count, once past exactValues
	n        int64
	min, max clock.Duration
	sum      clock.Duration
}

// Add records one duration (negative values count as 0).
func (d *Dist) Add(v clock.Duration) { d.add(v) }

func (d *Dist) add(v clock.Duration) {
	v = max(v, 0)
	if d.n == 0 || v < d.min {
		d.min = v
	}
	d.max = max(d.max, v)
	d.n++
	d.sum += v
	if d.hist == nil {
		if len(d.exact) < exactValues {
			d.exact = append(d.exact, v)
			return
		}
		d.hist = map[uint32]int64{}
		for _, x := range d.exact {
			d.hist[bucket(x)]++
		}
	}
	d.hist[bucket(v)]++
}

// toHist moves the exact values into the histogram.
func (d *Dist) toHist() {
	if d.hist != nil {
		return
	}
	d.hist = map[uint32]int64{}
	for _, x := range d.exact {
		d.hist[bucket(x)]++
	}
}

// Merge adds every value of o to d (o is not modified). The result is
// exact while the two together hold at most exactValues values.
func (d *Dist) Merge(o *Dist) {
	if o == nil || o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	d.max = max(d.max, o.max)
	d.n += o.n
	d.sum += o.sum
	if d.hist == nil && o.hist == nil && len(d.exact)+len(o.exact) <= exactValues {
		d.exact = append(d.exact, o.exact...)
		return
	}
	d.toHist()
	if o.hist == nil {
		for _, x := range o.exact {
			d.hist[bucket(x)]++
		}
		return
	}
	for b, c := range o.hist {
		d.hist[b] += c
	}
}

// First returns the values recorded first, in order: all of them up to
// the first 4096 (exactValues), then only those. The caller must not
// modify them.
func (d *Dist) First() []clock.Duration { return d.exact }

// Count returns the number of values recorded.
func (d *Dist) Count() int64 { return d.n }

// Stats returns the distribution's summary (see stats).
func (d *Dist) Stats() Stats { return d.stats() }

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the
// ceil(q·n)-th smallest value, exact while every value is kept and within
// 1/2^subBits after; 0 when empty.
func (d *Dist) Quantile(q float64) clock.Duration {
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

// bucket maps v to its histogram bucket: values below 2^subBits
// are their own bucket; above, the exponent and the subBits bits after
// the leading one.
func bucket(v clock.Duration) uint32 {
	u := uint64(v)
	if u < 1<<subBits {
		return uint32(u)
	}
	e := uint32(bits.Len64(u)) - subBits - 1
	return (e+1)<<subBits | uint32(u>>e)&(1<<subBits-1)
}

// bucketMid returns a representative value of bucket b (its midpoint).
func bucketMid(b uint32) clock.Duration {
	e := b >> subBits
	if e == 0 {
		return clock.Duration(b)
	}
	e--
	lo := uint64(1<<subBits|b&(1<<subBits-1)) << e
	return clock.Duration(lo + (uint64(1)<<e)/2)
}

// stats returns the distribution's summary; exact while every value is
// kept, the quantiles within 1/2^subBits after.
func (d *Dist) stats() Stats {
	if d.n == 0 {
		return Stats{}
	}
	if d.hist == nil {
		return Summarize(d.exact)
	}
	q, n := d.rank, d.n
	return Stats{Count: int(n), Min: d.min, Max: d.max, Median: q(n / 2),
		P99: q(min(n-1, (n*99+99)/100-1)), Mean: d.sum / clock.Duration(n)}
}

// rank returns the histogram's value of the rank-th smallest value
// (0-based): its bucket's midpoint, clamped to [min, max].
func (d *Dist) rank(rank int64) clock.Duration {
	keys := make([]uint32, 0, len(d.hist))
	for k := range d.hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var c int64
	for _, k := range keys {
		c += d.hist[k]
		if c > rank {
			return min(max(bucketMid(k), d.min), d.max)
		}
	}
	return d.max
}

// Stats summarises completion times.
type Stats struct {
	Count                 int
	Min, Median, P99, Max clock.Duration
	Mean                  clock.Duration
}

// Summarize returns the distribution of d (count, min, median, p99, max,
// mean), exactly; d is not modified.
func Summarize(d []clock.Duration) Stats {
	if len(d) == 0 {
		return Stats{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum clock.Duration
	for _, x := range s {
		sum += x
	}
	return Stats{Count: len(s), Min: s[0], Max: s[len(s)-1], Median: s[len(s)/2],
		P99: s[min(len(s)-1, (len(s)*99+99)/100-1)], Mean: sum / clock.Duration(len(s))}
}
