package stats

import (
	"context"
	"fmt"
	"sync"

	"github.com/rocelab/rocelab/lab/emulation/nodeapi"
)

// Target is a node whose telemetry to read.
type Target struct {
	Node, Socket string
}

// Collect reads one snapshot from every target, in parallel; a node that
// does not answer fails the whole call.
func Collect(ctx context.Context, targets []Target) ([]Snapshot, error) {
	out := make([]Snapshot, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			c := nodeapi.NewClient(t.Socket)
			defer c.Close()
			s, err := c.Telemetry(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("telemetry of %s: %w", t.Node, err)
				return
			}
			out[i] = Snapshot{Node: t.Node, Samples: s}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ComputeAll is Compute per node of cur, against the snapshot of the same
// node in prev (prev nil: averages since each node started), merged.
func ComputeAll(prev, cur []Snapshot) Report {
	var r Report
	for i, c := range cur {
		var p Snapshot
		if i < len(prev) && prev[i].Node == c.Node {
			p = prev[i]
		}
		r.Merge(Compute(p, c))
	}
	return r
}
