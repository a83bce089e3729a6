package scenario

import (
	"fmt"
	"strings"

	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/topologies"
)

// Result is an evaluated expectation.
type Result struct {
	// Expectation as written, and where.
	Expectation string
	Pos         topologies.Pos
	Pass        bool
	// Left and Right are the two sides of the expectation's first
	// comparison; Comparisons has all of them (and, or).
	Left, Right expect.Quantity
	Comparisons []expect.Comparison
	// Err is why the expectation could not be evaluated (a metric with no
	// readings); the expectation then fails.
	Err error
	// Message is the human sentence.
	Message string
}

// Evaluate evaluates every expectation of s against m.
func (s *Scenario) Evaluate(m expect.Metrics) []Result {
	out := make([]Result, len(s.Expect))
	for i, x := range s.Expect {
		out[i] = x.Eval(m)
	}
	return out
}

// Eval evaluates x against m.
func (x *Expectation) Eval(m expect.Metrics) Result {
	r := Result{Expectation: x.Text, Pos: x.Pos}
	pass, cmps, err := x.cond.Eval(m)
	r.Comparisons = cmps
	if len(r.Comparisons) > 0 {
		r.Left, r.Right = r.Comparisons[0].Left, r.Comparisons[0].Right
	}
	if err != nil {
		r.Err = err
		r.Message = fmt.Sprintf("%s: %v", x.Text, err)
		return r
	}
	r.Pass = pass
	var parts []string
	for _, c := range r.Comparisons {
		parts = append(parts, c.String())
	}
	r.Message = strings.Join(parts, "; ")
	return r
}
