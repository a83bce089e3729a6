package fct

import (
	"encoding/json"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
)

// distJSON is a Dist on the wire: its exact values while it keeps them,
// else its histogram's buckets, with the exact count, min, max and sum.
// Durations are picoseconds, as clock.Duration.
type distJSON struct {
	N       int64            `json:"n"`
	Min     clock.Duration   `json:"min_ps"`
	Max     clock.Duration   `json:"max_ps"`
	Sum     clock.Duration   `json:"sum_ps"`
	Exact   []clock.Duration `json:"exact_ps,omitempty"`
	Buckets map[uint32]int64 `json:"buckets,omitempty"`
}

// MarshalJSON encodes d so that UnmarshalJSON gives back the same
// statistics: an endpoint node sends a perf job's completion times this
// way, and the scenario runner merges them into the job's.
func (d *Dist) MarshalJSON() ([]byte, error) {
	w := distJSON{N: d.n, Min: d.min, Max: d.max, Sum: d.sum, Exact: d.exact, Buckets: d.hist}
	if d.hist != nil {
		w.Exact = nil // the first exactValues, also counted in the buckets
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON wrote, refusing a distribution
// whose parts disagree (a count that is not the values' or the buckets').
func (d *Dist) UnmarshalJSON(b []byte) error {
	var w distJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var held int64
	for k, c := range w.Buckets {
		if c < 0 || k >= 64<<subBits+1<<subBits {
			return fmt.Errorf("fct: bucket %d with count %d", k, c)
		}
		held += c
	}
	switch {
	case w.Buckets == nil && int64(len(w.Exact)) != w.N,
		w.Buckets != nil && (len(w.Exact) != 0 || held != w.N):
		return fmt.Errorf("fct: a distribution of %d values holds %d exact values and %d in buckets", w.N, len(w.Exact), held)
	case len(w.Exact) > exactValues:
		return fmt.Errorf("fct: %d exact values, at most %d", len(w.Exact), exactValues)
	}
	*d = Dist{exact: w.Exact, hist: w.Buckets, n: w.N, min: w.Min, max: w.Max, sum: w.Sum}
	return nil
}
