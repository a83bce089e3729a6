package fct

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestJSONRoundTrip: a distribution sent as JSON gives the same
// statistics and merges the same, exact or histogrammed.
func TestJSONRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 100, exactValues, 3 * exactValues} {
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		var d Dist
		for range n {
			d.Add(clock.Duration(rng.ExpFloat64() * float64(20*clock.Microsecond)))
		}
		b, err := json.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		var got Dist
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if got.Stats() != d.Stats() || got.Quantile(0.999) != d.Quantile(0.999) {
			t.Errorf("n=%d: stats %+v after the round trip, want %+v", n, got.Stats(), d.Stats())
		}
		var a, c Dist
		a.Merge(&d)
		a.Merge(&d)
		c.Merge(&got)
		c.Merge(&got)
		if a.Stats() != c.Stats() {
			t.Errorf("n=%d: merged %+v, want %+v", n, c.Stats(), a.Stats())
		}
	}
}

func TestJSONRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"n":2,"exact_ps":[1]}`, "holds 1 exact values"},
		{`{"n":2,"buckets":{"5":1}}`, "0 exact values and 1 in buckets"},
		{`{"n":1,"buckets":{"99999":1}}`, "bucket 99999"},
		{`{"n":1,"exact_ps":[1],"buckets":{"1":1}}`, "holds 1 exact values"},
		{`[1]`, "cannot unmarshal"},
	} {
		var d Dist
		err := json.Unmarshal([]byte(tc.in), &d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.in, err, tc.want)
		}
	}
}
