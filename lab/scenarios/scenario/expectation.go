package scenario

import (
	"errors"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/topologies"
)

// Expectation is one compiled expectation.
type Expectation struct {
	// Text as written.
	Text string
	// Pos is where its text starts in the scenario file.
	Pos  topologies.Pos
	cond *expect.Expr
}

// String returns the expectation as written.
func (x *Expectation) String() string { return x.Text }

// CompileExpectation parses src and checks it against env: metric names,
// label selectors and their values, units. Errors are *expect.ExprError, at a
// byte offset of src.
func CompileExpectation(src string, env Env) (*Expectation, error) {
	e, err := expect.Compile(src, binding{env})
	if err != nil {
		return nil, err
	}
	return &Expectation{Text: src, cond: e}, nil
}

func (r *resolver) expectations(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		r.e.add(posOf(n), "expect: want a list of expectations, got %s", yamldoc.KindName(n))
		return
	}
	env := Env{Topology: r.t, Workloads: r.s.Workloads, Duration: r.s.Duration}
	for _, c := range n.Content {
		c = yamldoc.Resolve(c)
		if c.Kind != yaml.ScalarNode || yamldoc.IsNull(c) {
			r.e.add(posOf(c), "expect: want an expectation like drops(class=lossless) == 0, got %s", yamldoc.KindName(c))
			continue
		}
		x, err := CompileExpectation(c.Value, env)
		var xe *expect.ExprError
		switch {
		case errors.As(err, &xe):
			r.e.add(r.e.at(c, xe.Offset), "expect: %s", xe.Msg)
			continue
		case err != nil:
			r.e.add(posOf(c), "expect: %v", err)
			continue
		}
		x.Pos = r.e.at(c, 0)
		if h := r.hierWorkload(); h != nil && slices.Contains(x.Samples(), "collective_wrong_elements_total") {
			r.e.add(x.Pos, "expect: checking collective data (wrong) needs real bytes in every NIC, and workload %s (hier-allreduce) runs payload-free", h.Name)
			continue
		}
		r.s.Expect = append(r.s.Expect, x)
	}
}

// hierWorkload returns the first hier-allreduce workload, or nil.
func (r *resolver) hierWorkload() *Workload {
	for _, w := range r.s.Workloads {
		if w.Hierarchical {
			return w
		}
	}
	return nil
}

// Samples returns the names of the telemetry samples x reads, sorted and
// without repeats: a runner needs to keep only those in the snapshots it
// takes during a run.
func (x *Expectation) Samples() []string { return x.cond.Samples() }
