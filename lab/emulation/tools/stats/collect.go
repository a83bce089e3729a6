package stats

import (
	"context"
	"errors"
	"fmt"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// Target is a node whose telemetry to read.
type Target struct {
	Node, Socket string
	// Lab, Machine and Agent, for a node of a lab that spans machines:
	// a call that fails for its agent's sake says so (Dead.Agent).
	Lab, Machine, Agent string
}

// Dead is a target that did not answer.
type Dead struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
	// Agent says what is wrong with the agent the node is reached
	// through, when that is why (deploy.AgentTrouble): restarting the
	// node cannot help then.
	Agent string `json:"agent,omitempty"`
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
			t := targets[i]
			dead = append(dead, Dead{Node: t.Node, Reason: why(err), Agent: deploy.AgentTrouble(t.Lab, t.Machine, t.Agent, err)})
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
