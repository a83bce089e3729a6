package expect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/topologies"
)

// numExpr is a compiled numeric expression.
type numExpr interface {
	eval(m Metrics) (float64, error)
	unit() Unit
}

// boolExpr is a compiled condition; it appends every comparison it
// evaluates to out.
type boolExpr interface {
	evalBool(m Metrics, out *[]Comparison) (bool, error)
}

// Binder binds an expression's names to a run: the constants and the
// selectors of metrics. Its errors should be *ExprError (Errorf), at a
// byte offset of the expression's text.
type Binder interface {
	// Constant returns the constant name (one of Constants) under sels;
	// off is where the name starts.
	Constant(name string, off int, sels []Selector) (Quantity, error)
	// Lookups checks metric m's selectors (labels m takes, none given
	// twice, values that exist) and resolves them to the telemetry queries
	// that read m; text is the metric as written.
	Lookups(m *Metric, sels []Selector, text string) ([]Lookup, error)
}

type compiler struct {
	src     string
	bind    Binder
	metrics map[string]*Metric
	names   []string // metrics, aggregations and constants, for suggestions
}

func newCompiler(src string, bind Binder) *compiler {
	c := &compiler{src: src, bind: bind, metrics: map[string]*Metric{}}
	for _, m := range Catalogue() {
		c.metrics[m.Name] = &m
		c.names = append(c.names, m.Name)
	}
	c.names = append(append(c.names, Aggregations...), Constants...)
	return c
}

func (c *compiler) text(n node) string {
	s, e := n.span()
	return c.src[s:e]
}

func start(n node) int { s, _ := n.span(); return s }

// compileBool compiles n as a condition.
func (c *compiler) compileBool(n node) (boolExpr, error) {
	switch n := n.(type) {
	case *parenNode:
		return c.compileBool(n.x)
	case *unNode:
		if n.op == "not" {
			x, err := c.compileBool(n.x)
			return notExpr{x}, err
		}
	case *binNode:
		switch n.op {
		case "and", "or":
			l, err := c.compileBool(n.l)
			if err != nil {
				return nil, err
			}
			r, err := c.compileBool(n.r)
			return logicExpr{n.op, l, r}, err
		case "==", "!=", "<", "<=", ">", ">=":
			return c.compileCompare(n)
		}
	}
	return nil, Errorf(start(n), "want a comparison like %s > 0, got %s", c.text(n), c.text(n))
}

// compileOperands compiles both operands of n.
func (c *compiler) compileOperands(n *binNode) (l, r numExpr, err error) {
	if l, err = c.compileNum(n.l); err != nil {
		return nil, nil, err
	}
	r, err = c.compileNum(n.r)
	return l, r, err
}

func (c *compiler) compileCompare(n *binNode) (boolExpr, error) {
	l, r, err := c.compileOperands(n)
	if err != nil {
		return nil, err
	}
	l, r, err = c.sameUnit(n, l, r, "compare")
	if err != nil {
		return nil, err
	}
	_, literal := unparen(n.r).(*numNode)
	return &compareExpr{
		op: n.op, l: l, r: r,
		ltext: c.text(n.l), rtext: c.text(n.r), text: c.text(n), rLiteral: literal,
	}, nil
}

func unparen(n node) node {
	for {
		p, ok := n.(*parenNode)
		if !ok {
			return n
		}
		n = p.x
	}
}

// isZero reports whether n is the literal 0, which fits any unit.
func isZero(n node) bool {
	num, ok := unparen(n).(*numNode)
	return ok && num.q.Value == 0 && num.q.Unit == Dimensionless
}

// sameUnit checks that both sides of n have the same unit (a literal 0
// takes the other side's).
func (c *compiler) sameUnit(n *binNode, l, r numExpr, verb string) (numExpr, numExpr, error) {
	switch {
	case l.unit() == r.unit():
	case isZero(n.r):
		r = constExpr{0, l.unit()}
	case isZero(n.l):
		l = constExpr{0, r.unit()}
	default:
		hint := ""
		if l.unit() == Dimensionless || r.unit() == Dimensionless {
			hint = "; write the number with a unit, e.g. 100KB, 2ms or 400G"
		}
		return nil, nil, Errorf(n.opOff, "cannot %s %s (%s) with %s (%s)%s",
			verb, c.text(n.l), l.unit(), c.text(n.r), r.unit(), hint)
	}
	return l, r, nil
}

// compileNum compiles n as a number.
func (c *compiler) compileNum(n node) (numExpr, error) {
	switch n := n.(type) {
	case *numNode:
		return constExpr{n.q.Value, n.q.Unit}, nil
	case *parenNode:
		return c.compileNum(n.x)
	case *nameNode:
		return c.compileName(n.name, n.start, nil)
	case *callNode:
		return c.compileCall(n)
	case *unNode:
		if n.op == "-" {
			x, err := c.compileNum(n.x)
			if err != nil {
				return nil, err
			}
			return arithExpr{"*", constExpr{-1, Dimensionless}, x, x.unit()}, nil
		}
	case *binNode:
		switch n.op {
		case "+", "-", "*", "/":
			l, r, err := c.compileOperands(n)
			if err != nil {
				return nil, err
			}
			switch n.op {
			case "*":
				return arithExpr{n.op, l, r, l.unit().mul(r.unit())}, nil
			case "/":
				return arithExpr{n.op, l, r, l.unit().div(r.unit())}, nil
			}
			verb := "add"
			if n.op == "-" {
				verb = "subtract"
			}
			if l, r, err = c.sameUnit(n, l, r, verb); err != nil {
				return nil, err
			}
			return arithExpr{n.op, l, r, l.unit()}, nil
		}
	}
	return nil, Errorf(start(n), "want a number, got the condition %s", c.text(n))
}

// compileName compiles a bare name or a call's name with its selectors:
// a constant, or a metric with its default aggregation.
func (c *compiler) compileName(name string, off int, call *callNode) (numExpr, error) {
	var sels []Selector
	if call != nil {
		sels = call.sels
		if len(call.args) > 0 {
			return nil, Errorf(start(call.args[0]), "%s takes label selectors like node=rtsw1, not %s", name, c.text(call.args[0]))
		}
	}
	switch name {
	case "duration":
		if call != nil {
			return nil, Errorf(off, "duration takes no arguments")
		}
		fallthrough
	case "line_rate":
		q, err := c.bind.Constant(name, off, sels)
		if err != nil {
			return nil, err
		}
		return constExpr{q.Value, q.Unit}, nil
	}
	m := c.metrics[name]
	if m == nil {
		if slices.Contains(Aggregations, name) {
			return nil, Errorf(off, "%s takes a metric, like %s(queue_depth(node=rtsw1))", name, name)
		}
		return nil, Errorf(off, "unknown metric %q%s", name, DidYouMean(name, c.names))
	}
	text := name
	if call != nil {
		text = c.text(call)
	}
	return c.metric(m, m.Agg, sels, text)
}

// metric compiles metric m aggregated by agg under sels.
func (c *compiler) metric(m *Metric, agg string, sels []Selector, text string) (numExpr, error) {
	lookups, err := c.bind.Lookups(m, sels, text)
	if err != nil {
		return nil, err
	}
	job := slices.ContainsFunc(sels, func(s Selector) bool { return s.Name == LabelJob })
	u := m.Unit
	switch agg {
	case "rate":
		u = u.div(Time)
	case "count":
		u = Dimensionless
	}
	if m.Summary() {
		// One reading per statistic: pick agg's; without job=, the
		// series over every job (no job label).
		for i := range lookups {
			l := &lookups[i]
			l.Match = append(slices.Clone(l.Match), telemetry.Label{Name: "stat", Value: agg})
			if !job {
				l.Match = append(l.Match, telemetry.Label{Name: LabelJob, Value: ""})
			}
			if agg == "count" {
				l.Scale = 1
			}
		}
		agg = "max"
	}
	return &metricExpr{m: m, agg: agg, text: text, lookups: lookups, u: u}, nil
}

// DidYouMean is "; did you mean X?" for the entry X of known closest to
// s, or "" when none is close.
func DidYouMean(s string, known []string) string {
	if m := topologies.Closest(s, known); m != "" {
		return fmt.Sprintf("; did you mean %s?", m)
	}
	return ""
}

func (c *compiler) compileCall(n *callNode) (numExpr, error) {
	if !slices.Contains(Aggregations, n.fn) {
		return c.compileName(n.fn, n.start, n)
	}
	if len(n.sels) > 0 || len(n.args) != 1 {
		return nil, Errorf(n.start, "%s takes one metric, like %s(queue_depth(node=rtsw1))", n.fn, n.fn)
	}
	var (
		name string
		sels []Selector
		at   = start(n.args[0])
	)
	switch a := unparen(n.args[0]).(type) {
	case *nameNode:
		name = a.name
	case *callNode:
		name, sels = a.fn, a.sels
		if len(a.args) > 0 && c.metrics[name] != nil {
			return nil, Errorf(start(a.args[0]), "%s takes label selectors like node=rtsw1, not %s", a.fn, c.text(a.args[0]))
		}
	default:
		return nil, Errorf(at, "%s takes a metric, like %s(queue_depth(node=rtsw1)), not %s", n.fn, n.fn, c.text(n.args[0]))
	}
	m := c.metrics[name]
	if m == nil {
		if slices.Contains(Aggregations, name) || slices.Contains(Constants, name) {
			return nil, Errorf(at, "%s takes a metric, not %s", n.fn, name)
		}
		return nil, Errorf(at, "unknown metric %q%s", name, DidYouMean(name, c.names))
	}
	if m.Summary() && !slices.Contains(SummaryStats, n.fn) {
		return nil, Errorf(n.start, "%s: %s is summarised while the run goes; take one of %s", n.fn, name, strings.Join(SummaryStats, ", "))
	}
	return c.metric(m, n.fn, sels, c.text(n))
}

// Lookup is one query a metric makes: a telemetry sample with labels.
type Lookup struct {
	Sample string
	Match  []telemetry.Label
	Scale  float64
}
