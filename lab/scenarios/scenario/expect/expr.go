package expect

import "slices"

// Expr is a compiled expectation: a condition over metrics.
type Expr struct {
	root boolExpr
}

// Compile parses src and checks it against bind: metric names, label
// selectors and their values, units. Errors are *ExprError, at a byte
// offset of src.
func Compile(src string, bind Binder) (*Expr, error) {
	n, err := parseExpr(src)
	if err != nil {
		return nil, err
	}
	root, err := newCompiler(src, bind).compileBool(n)
	if err != nil {
		return nil, err
	}
	return &Expr{root: root}, nil
}

// Eval evaluates e against m: whether it holds, and every comparison it
// evaluated, in order (both sides of and and or, so that a report shows
// every value).
func (e *Expr) Eval(m Metrics) (bool, []Comparison, error) {
	var out []Comparison
	pass, err := e.root.evalBool(m, &out)
	return pass, out, err
}

// Lookups returns the telemetry queries e makes, in evaluation order.
func (e *Expr) Lookups() []Lookup {
	var out []Lookup
	var num func(numExpr)
	var cond func(boolExpr)
	num = func(e numExpr) {
		switch e := e.(type) {
		case arithExpr:
			num(e.l)
			num(e.r)
		case *metricExpr:
			out = append(out, e.lookups...)
		}
	}
	cond = func(e boolExpr) {
		switch e := e.(type) {
		case *compareExpr:
			num(e.l)
			num(e.r)
		case logicExpr:
			cond(e.l)
			cond(e.r)
		case notExpr:
			cond(e.x)
		}
	}
	cond(e.root)
	return out
}

// Samples returns the names of the telemetry samples e reads, sorted and
// without repeats.
func (e *Expr) Samples() []string {
	var out []string
	for _, l := range e.Lookups() {
		out = append(out, l.Sample)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
