package scenario

import (
	"errors"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/topologies"
)

// Expectation is one compiled expectation.
type Expectation struct {
	// Text as written.
	Text string
	// Pos is where its text starts in the scenario file.
	Pos  topologies.Pos
	root boolExpr
}

// String returns the expectation as written.
func (x *Expectation) String() string { return x.Text }

// CompileExpectation parses src and checks it against env: metric names,
// label selectors and their values, units. Errors are *ExprError, at a
// byte offset of src.
func CompileExpectation(src string, env Env) (*Expectation, error) {
	n, err := parseExpr(src)
	if err != nil {
		return nil, err
	}
	root, err := newCompiler(src, env).compileBool(n)
	if err != nil {
		return nil, err
	}
	return &Expectation{Text: src, root: root}, nil
}

func (r *resolver) expectations(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		r.e.add(posOf(n), "expect: want a list of expectations, got %s", kindName(n))
		return
	}
	env := Env{Topology: r.t, Workloads: r.s.Workloads, Duration: r.s.Duration}
	for _, c := range n.Content {
		c = resolveAlias(c)
		if c.Kind != yaml.ScalarNode || isNull(c) {
			r.e.add(posOf(c), "expect: want an expectation like drops(class=lossless) == 0, got %s", kindName(c))
			continue
		}
		x, err := CompileExpectation(c.Value, env)
		var xe *ExprError
		switch {
		case errors.As(err, &xe):
			r.e.add(r.e.at(c, xe.Offset), "expect: %s", xe.Msg)
			continue
		case err != nil:
			r.e.add(posOf(c), "expect: %v", err)
			continue
		}
		x.Pos = r.e.at(c, 0)
		r.s.Expect = append(r.s.Expect, x)
	}
}
