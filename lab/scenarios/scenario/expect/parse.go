package expect

import "fmt"

// The grammar (a recursive-descent parser, lowest precedence first):
//
//	expect  = and { "or" and }
//	and     = not { "and" not }
//	not     = "not" not | compare
//	compare = sum [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) sum ]
//	sum     = term { ( "+" | "-" ) term }
//	term    = unary { ( "*" | "/" ) unary }
//	unary   = "-" unary | primary
//	primary = number | name [ "(" [ arg { "," arg } ] ")" ] | "(" expect ")"
//	arg     = label "=" value | expect
//	value   = "quoted" | a run of characters other than space , ) "
//
// Every node keeps its byte span in the source so that errors point at the
// exact character and results quote the text as written.

type node interface{ span() (int, int) }

type numNode struct {
	start, end int
	q          Quantity
}

type nameNode struct {
	start, end int
	name       string
}

// Selector is a label selector name=value in a call, with the byte
// offsets of its name and value.
type Selector struct {
	Name, Value       string
	NameOff, ValueOff int
}

type callNode struct {
	start, end int
	fn         string
	args       []node
	sels       []Selector
}

type binNode struct {
	op    string
	opOff int
	l, r  node
}

type unNode struct {
	op    string
	start int
	x     node
}

type parenNode struct {
	start, end int
	x          node
}

func (n *numNode) span() (int, int) { return n.start, n.end }

func (n *nameNode) span() (int, int) { return n.start, n.end }

func (n *callNode) span() (int, int) { return n.start, n.end }

func (n *parenNode) span() (int, int) { return n.start, n.end }

func (n *unNode) span() (int, int) { _, e := n.x.span(); return n.start, e }

func (n *binNode) span() (int, int) {
	s, _ := n.l.span()
	_, e := n.r.span()
	return s, e
}

type parser struct {
	lx    lexer
	tok   token
	depth int // parentheses, calls and prefix operators open now
	chain int // binary operators read
}

// maxTerms bounds the binary operators of one expression.
const maxTerms = 10000

// maxDepth bounds how deeply an expression nests (parentheses, calls,
// prefix operators): the parser and the evaluator recurse once per level,
// and a hostile file must not exhaust the stack.
const maxDepth = 200

// enter opens one nesting level at off; leave closes it.
func (p *parser) enter(off int) error {
	if p.depth++; p.depth > maxDepth {
		return Errorf(off, "expression nested more than %d levels deep", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseExpr parses src into a syntax tree.
func parseExpr(src string) (node, error) {
	p := &parser{lx: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, Errorf(0, "empty expectation")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		if p.tok.text == "=" {
			return nil, Errorf(p.tok.off, "use == to compare")
		}
		return nil, Errorf(p.tok.off, "unexpected %s after the expression", p.describe())
	}
	return n, nil
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of expression"
	case tNum:
		return fmt.Sprintf("number %s", p.tok.text)
	case tName:
		return fmt.Sprintf("name %s", p.tok.text)
	}
	return fmt.Sprintf("%q", p.lx.src[p.tok.off:p.tok.end])
}

func (p *parser) binary(next func() (node, error), ops ...string) (node, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op, off, r, err := p.operator(ops, next)
		if err != nil || op == "" {
			return l, err
		}
		// A chain of binary operators builds a left-deep tree, which the
		// evaluator walks recursively: it counts as nesting too.
		if p.chain++; p.chain > maxTerms {
			return nil, Errorf(off, "expression has more than %d operators", maxTerms)
		}
		l = &binNode{op: op, opOff: off, l: l, r: r}
	}
}

// operator reads one of ops, when the next token is one, and the operand
// after it (next): the operator, its offset and the operand; op is ""
// when no operator follows.
func (p *parser) operator(ops []string, next func() (node, error)) (op string, off int, r node, err error) {
	for _, o := range ops {
		if p.is(o) {
			op = o
		}
	}
	if op == "" {
		return "", 0, nil, nil
	}
	off = p.tok.off
	if err := p.advance(); err != nil {
		return "", 0, nil, err
	}
	r, err = next()
	return op, off, r, err
}

func (p *parser) or() (node, error) { return p.binary(p.and, "or") }

func (p *parser) and() (node, error) { return p.binary(p.not, "and") }

func (p *parser) not() (node, error) { return p.prefix("not", p.not, p.compare) }

// prefix parses an optional prefix operator op applied to operand (which
// may itself start with op), else falls through to next.
func (p *parser) prefix(op string, operand, next func() (node, error)) (node, error) {
	if !p.is(op) {
		return next()
	}
	start := p.tok.off
	if err := p.enter(start); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := operand()
	if err != nil {
		return nil, err
	}
	return &unNode{op: op, start: start, x: x}, nil
}

var cmpOps = []string{"==", "!=", "<", "<=", ">", ">="}

func (p *parser) compare() (node, error) {
	l, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.is("=") {
		return nil, Errorf(p.tok.off, "use == to compare")
	}
	op, off, r, err := p.operator(cmpOps, p.sum)
	if err != nil || op == "" {
		return l, err
	}
	for _, o := range cmpOps {
		if p.is(o) {
			return nil, Errorf(p.tok.off, "comparisons do not chain: write a < b and b < c")
		}
	}
	return &binNode{op: op, opOff: off, l: l, r: r}, nil
}

func (p *parser) sum() (node, error) { return p.binary(p.term, "+", "-") }

func (p *parser) term() (node, error) { return p.binary(p.unary, "*", "/") }

func (p *parser) unary() (node, error) { return p.prefix("-", p.unary, p.primary) }

func (p *parser) primary() (node, error) {
	t := p.tok
	switch {
	case t.kind == tNum:
		if err := p.advance(); err != nil {
			return nil, err
		}
		return &numNode{start: t.off, end: t.end, q: t.q}, nil
	case p.is("("):
		if err := p.enter(t.off); err != nil {
			return nil, err
		}
		defer p.leave()
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			return nil, Errorf(p.tok.off, "want ) to close the ( at offset %d, got %s", t.off, p.describe())
		}
		end := p.tok.end
		if err := p.advance(); err != nil {
			return nil, err
		}
		return &parenNode{start: t.off, end: end, x: x}, nil
	case t.kind == tName:
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.is("(") {
			return &nameNode{start: t.off, end: t.end, name: t.text}, nil
		}
		return p.call(t)
	}
	return nil, Errorf(t.off, "want a number, a metric or (, got %s", p.describe())
}

// call parses the arguments of name( … ).
func (p *parser) call(name token) (node, error) {
	if err := p.enter(name.off); err != nil {
		return nil, err
	}
	defer p.leave()
	c := &callNode{start: name.off, fn: name.text}
	// Look ahead for label=value without consuming: a selector starts with
	// a name followed by a single =.
	for first := true; ; first = false {
		if err := p.advance(); err != nil { // past ( or ,
			return nil, err
		}
		if first && p.is(")") {
			break
		}
		if sel, ok, err := p.selector(); err != nil {
			return nil, err
		} else if ok {
			c.sels = append(c.sels, sel)
		} else {
			arg, err := p.or()
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, arg)
		}
		if p.is(")") {
			break
		}
		if !p.is(",") {
			return nil, Errorf(p.tok.off, "want , or ) in the arguments of %s, got %s", c.fn, p.describe())
		}
	}
	c.end = p.tok.end
	return c, p.advance()
}

// selector parses label=value if the current token starts one.
func (p *parser) selector() (Selector, bool, error) {
	if p.tok.kind != tName {
		return Selector{}, false, nil
	}
	save := p.lx.off
	p.lx.skipSpace()
	if p.lx.off >= len(p.lx.src) || p.lx.src[p.lx.off] != '=' || p.lx.off+1 < len(p.lx.src) && p.lx.src[p.lx.off+1] == '=' {
		p.lx.off = save
		return Selector{}, false, nil
	}
	s := Selector{Name: p.tok.text, NameOff: p.tok.off}
	p.lx.off++ // =
	p.lx.skipSpace()
	src := p.lx.src
	s.ValueOff = p.lx.off
	switch {
	case p.lx.off < len(src) && src[p.lx.off] == '"':
		end := p.lx.off + 1
		for end < len(src) && src[end] != '"' {
			end++
		}
		if end >= len(src) {
			return s, false, Errorf(p.lx.off, "unclosed \"")
		}
		s.Value, s.ValueOff = src[p.lx.off+1:end], p.lx.off+1
		p.lx.off = end + 1
	default:
		end := p.lx.off
		for end < len(src) && src[end] != ' ' && src[end] != '\t' && src[end] != ',' && src[end] != ')' && src[end] != '"' {
			end++
		}
		s.Value = src[p.lx.off:end]
		p.lx.off = end
	}
	if s.Value == "" {
		return s, false, Errorf(s.ValueOff, "label %s: missing value after =", s.Name)
	}
	return s, true, p.advance()
}
