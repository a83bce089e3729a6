package stats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// Target is a node whose telemetry to read.
type Target struct {
	Node, Socket string
}

// Dead is a target that did not answer.
type Dead struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// collectTimeout bounds one node's answer: a node that is wedged, not
// only dead, is marked instead of holding the report.
const collectTimeout = 3 * time.Second

// Collect reads one snapshot from every target, in parallel. A node that
// does not answer is left out of the snapshots and listed in dead, in
// target order; the error is only ctx's.
func Collect(ctx context.Context, targets []Target) (snaps []Snapshot, dead []Dead, err error) {
	out := make([]Snapshot, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			c := nodeapi.NewClient(t.Socket)
			defer c.Close()
			cctx, cancel := context.WithTimeout(ctx, collectTimeout)
			defer cancel()
			s, err := c.Telemetry(cctx)
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = Snapshot{Node: t.Node, Samples: s}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for i, err := range errs {
		if err != nil {
			dead = append(dead, Dead{Node: targets[i].Node, Reason: why(err)})
			continue
		}
		snaps = append(snaps, out[i])
	}
	return snaps, dead, nil
}

// why is the short reason a node did not answer.
func why(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", collectTimeout)
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err.Error()
}

// ComputeAll is Compute per node of cur, against the snapshot of the same
// node in prev (none: averages since the node started), merged.
func ComputeAll(prev, cur []Snapshot) Report {
	var r Report
	byNode := map[string]Snapshot{}
	for _, p := range prev {
		byNode[p.Node] = p
	}
	for _, c := range cur {
		r.Merge(Compute(byNode[c.Node], c))
	}
	return r
}
