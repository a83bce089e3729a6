package scenario

import (
	"fmt"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/topologies"
)

// Env is what an expectation is checked against: the topology (node, port
// and class selectors, line_rate), the workloads (job selectors) and the
// run's duration (the duration constant).
type Env struct {
	Topology  *topologies.Topology
	Workloads []*Workload
	Duration  clock.Duration
}

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

type compiler struct {
	src     string
	env     Env
	metrics map[string]*Metric
	names   []string // metrics, aggregations and constants, for suggestions
}

func newCompiler(src string, env Env) *compiler {
	c := &compiler{src: src, env: env, metrics: map[string]*Metric{}}
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
	return nil, errAt(start(n), "want a comparison like %s > 0, got %s", c.text(n), c.text(n))
}

func (c *compiler) compileCompare(n *binNode) (boolExpr, error) {
	l, err := c.compileNum(n.l)
	if err != nil {
		return nil, err
	}
	r, err := c.compileNum(n.r)
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
		return nil, nil, errAt(n.opOff, "cannot %s %s (%s) with %s (%s)%s",
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
			l, err := c.compileNum(n.l)
			if err != nil {
				return nil, err
			}
			r, err := c.compileNum(n.r)
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
	return nil, errAt(start(n), "want a number, got the condition %s", c.text(n))
}

// compileName compiles a bare name or a call's name with its selectors:
// a constant, or a metric with its default aggregation.
func (c *compiler) compileName(name string, off int, call *callNode) (numExpr, error) {
	var sels []selector
	if call != nil {
		sels = call.sels
		if len(call.args) > 0 {
			return nil, errAt(start(call.args[0]), "%s takes label selectors like node=rtsw1, not %s", name, c.text(call.args[0]))
		}
	}
	switch name {
	case "line_rate":
		return c.lineRate(off, sels)
	case "duration":
		if call != nil {
			return nil, errAt(off, "duration takes no arguments")
		}
		if c.env.Duration <= 0 {
			return nil, errAt(off, "duration: the scenario sets no duration")
		}
		return constExpr{c.env.Duration.Seconds(), Time}, nil
	}
	m := c.metrics[name]
	if m == nil {
		if contains(Aggregations, name) {
			return nil, errAt(off, "%s takes a metric, like %s(queue_depth(node=rtsw1))", name, name)
		}
		return nil, errAt(off, "unknown metric %q%s", name, didYouMean(name, c.names))
	}
	text := name
	if call != nil {
		text = c.text(call)
	}
	return c.metric(m, m.Agg, sels, text)
}

func didYouMean(s string, known []string) string {
	if m := closest(s, known); m != "" {
		return fmt.Sprintf("; did you mean %s?", m)
	}
	return ""
}

func (c *compiler) compileCall(n *callNode) (numExpr, error) {
	if !contains(Aggregations, n.fn) {
		return c.compileName(n.fn, n.start, n)
	}
	if len(n.sels) > 0 || len(n.args) != 1 {
		return nil, errAt(n.start, "%s takes one metric, like %s(queue_depth(node=rtsw1))", n.fn, n.fn)
	}
	var (
		name string
		sels []selector
		at   = start(n.args[0])
	)
	switch a := unparen(n.args[0]).(type) {
	case *nameNode:
		name = a.name
	case *callNode:
		name, sels = a.fn, a.sels
		if len(a.args) > 0 && c.metrics[name] != nil {
			return nil, errAt(start(a.args[0]), "%s takes label selectors like node=rtsw1, not %s", a.fn, c.text(a.args[0]))
		}
	default:
		return nil, errAt(at, "%s takes a metric, like %s(queue_depth(node=rtsw1)), not %s", n.fn, n.fn, c.text(n.args[0]))
	}
	m := c.metrics[name]
	if m == nil {
		if contains(Aggregations, name) || contains(Constants, name) {
			return nil, errAt(at, "%s takes a metric, not %s", n.fn, name)
		}
		return nil, errAt(at, "unknown metric %q%s", name, didYouMean(name, c.names))
	}
	if m.Summary() && !contains(SummaryStats, n.fn) {
		return nil, errAt(n.start, "%s: %s is summarised while the run goes; take one of %s", n.fn, name, strings.Join(SummaryStats, ", "))
	}
	return c.metric(m, n.fn, sels, c.text(n))
}

// lineRate is the slowest NIC link of the selection, or of every host's
// back-end NICs.
func (c *compiler) lineRate(off int, sels []selector) (numExpr, error) {
	t := c.env.Topology
	if t == nil {
		return nil, errAt(off, "line_rate: no topology")
	}
	var ports []*topologies.Port
	if len(sels) == 0 {
		for _, n := range t.Nodes {
			if n.Kind == topologies.KindHost {
				ports = append(ports, planePorts(n, topologies.BE)...)
			}
		}
	}
	for _, s := range sels {
		ps, err := c.selectPorts(s)
		if err != nil {
			return nil, err
		}
		ports = append(ports, ps...)
	}
	var rate clock.Rate
	for _, p := range ports {
		if p.Link != nil && (rate == 0 || p.Rate < rate) {
			rate = p.Rate
		}
	}
	if rate == 0 {
		return nil, errAt(off, "line_rate: no linked NIC port in the selection")
	}
	return constExpr{float64(rate), Rate}, nil
}

// selectPorts resolves a line_rate selector to NIC ports.
func (c *compiler) selectPorts(s selector) ([]*topologies.Port, error) {
	switch s.name {
	case LabelJob:
		w, err := c.workload(s)
		if err != nil {
			return nil, err
		}
		return w.Ports(), nil
	case LabelNode:
		n, err := c.node(s)
		if err != nil {
			return nil, err
		}
		if n.Kind == topologies.KindSwitch {
			return n.Ports, nil
		}
		return planePorts(n, topologies.BE), nil
	case LabelNIC:
		p, err := c.nic(s)
		if err != nil {
			return nil, err
		}
		return []*topologies.Port{p}, nil
	}
	return nil, errAt(s.nameOff, "label %s: line_rate takes job, node or nic%s", s.name, didYouMean(s.name, []string{"job", "node", "nic"}))
}

func (c *compiler) workload(s selector) (*Workload, error) {
	var names []string
	for _, w := range c.env.Workloads {
		if w.Name == s.value {
			return w, nil
		}
		names = append(names, w.Name)
	}
	if len(names) == 0 {
		return nil, errAt(s.valueOff, "label job: no workload %q (the scenario has no workloads)", s.value)
	}
	return nil, errAt(s.valueOff, "label job: no workload %q%s", s.value, suggest(s.value, names))
}

func (c *compiler) node(s selector) (*topologies.Node, error) {
	if n := c.env.Topology.Node(s.value); n != nil {
		return n, nil
	}
	return nil, errAt(s.valueOff, "label %s: no node %q in topology %s%s", s.name, s.value, c.env.Topology.Name, suggestNode(c.env.Topology, s.value))
}

// nic resolves host:port (a NIC of a host or storage node).
func (c *compiler) nic(s selector) (*topologies.Port, error) {
	nodeName, portName, ok := strings.Cut(s.value, ":")
	if !ok {
		return nil, errAt(s.valueOff, "label %s: want node:port, e.g. host1:gpu0, got %q", s.name, s.value)
	}
	n, err := c.node(selector{name: s.name, value: nodeName, valueOff: s.valueOff})
	if err != nil {
		return nil, err
	}
	p, perr := port(n, portName)
	if perr != nil {
		return nil, errAt(s.valueOff+len(nodeName)+1, "label %s: %v", s.name, perr)
	}
	return p, nil
}
