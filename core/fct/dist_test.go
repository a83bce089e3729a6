package fct

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
)

func TestDist(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"empty", 0}, {"one", 1}, {"exact", exactValues}, {"streamed", 5 * exactValues}, {"long", 50 * exactValues},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var d Dist
			var all []clock.Duration
			for range tc.n {
				v := clock.Duration(rng.ExpFloat64() * float64(50*clock.Microsecond))
				d.add(v)
				all = append(all, v)
			}
			got, want := d.stats(), Summarize(all)
			if tc.n <= exactValues {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("exact stats differ (-want +got):\n%s", diff)
				}
				return
			}
			if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max || got.Mean != want.Mean {
				t.Errorf("count/min/max/mean %+v, want %+v", got, want)
			}
			for _, q := range []struct {
				name      string
				got, want clock.Duration
			}{{"median", got.Median, want.Median}, {"p99", got.P99, want.P99}} {
				if e := float64(q.got-q.want) / float64(q.want); e > 0.01 || e < -0.01 {
					t.Errorf("%s %v, want %v within 1%%", q.name, q.got, q.want)
				}
			}
			if len(d.exact) != exactValues || len(d.hist) > 64<<subBits {
				t.Errorf("kept %d exact values and %d buckets", len(d.exact), len(d.hist))
			}
		})
	}
}

func TestBucketMonotone(t *testing.T) {
	var prev uint32
	for v := clock.Duration(0); v < 1<<20; v += 7 {
		b := bucket(v)
		if b < prev {
			t.Fatalf("bucket(%d) = %d after %d", v, b, prev)
		}
		prev = b
		if m := bucketMid(b); v >= 1<<subBits && (float64(m) > float64(v)*1.01+1 || float64(m) < float64(v)*0.99) {
			t.Fatalf("value %d in bucket %d with midpoint %d", v, b, m)
		}
	}
}
