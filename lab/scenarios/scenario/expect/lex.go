package expect

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocelab/rocelab/core/units"
)

// The expectation language, lexically: numbers with an optional unit
// written right after them or after spaces (2ms, 400G, "400 Gb/s", 1MB,
// 80%, 1e9; units are core/units' grammar), names
// ([A-Za-z_][A-Za-z0-9_]*), the operators + - * / ( ) , = == != < <= > >=,
// the words and, or, not (also && || !), and × − ≤ ≥ ≠ for * - <= >= !=.

type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tName
	tOp
)

type token struct {
	kind tokKind
	text string // operator (normalized), name, or number as written
	off  int    // byte offset in the source
	end  int
	q    Quantity // tNum
}

// ExprError is an error in an expression, at byte Offset of its text.
type ExprError struct {
	Offset int
	Msg    string
}

func (e *ExprError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Errorf returns an ExprError at byte off.
func Errorf(off int, format string, args ...any) *ExprError {
	return &ExprError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

type lexer struct {
	src string
	off int
}

var unicodeOps = map[rune]string{'×': "*", '·': "*", '−': "-", '≤': "<=", '≥': ">=", '≠': "!="}

func (l *lexer) skipSpace() {
	for l.off < len(l.src) && (l.src[l.off] == ' ' || l.src[l.off] == '\t') {
		l.off++
	}
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.off
	if l.off >= len(l.src) {
		return token{kind: tEOF, off: start, end: start}, nil
	}
	c := l.src[l.off]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		return l.number()
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for l.off < len(l.src) && isNameByte(l.src[l.off]) {
			l.off++
		}
		t := token{kind: tName, text: l.src[start:l.off], off: start, end: l.off}
		if t.text == "and" || t.text == "or" || t.text == "not" {
			t.kind = tOp
		}
		return t, nil
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "(", ")", ",", "=", "<", ">", "!"} {
		if strings.HasPrefix(l.src[l.off:], op) {
			l.off += len(op)
			norm := map[string]string{"&&": "and", "||": "or", "!": "not"}[op]
			if norm == "" {
				norm = op
			}
			return token{kind: tOp, text: norm, off: start, end: l.off}, nil
		}
	}
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	if op, ok := unicodeOps[r]; ok {
		l.off += size
		return token{kind: tOp, text: op, off: start, end: l.off}, nil
	}
	return token{}, Errorf(start, "unexpected %q", r)
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// number lexes digits [. digits] [e [+-] digits] [unit].
func (l *lexer) number() (token, error) {
	start := l.off
	s := l.src
	for l.off < len(s) && (s[l.off] >= '0' && s[l.off] <= '9' || s[l.off] == '.') {
		l.off++
	}
	if l.off < len(s) && (s[l.off] == 'e' || s[l.off] == 'E') {
		j := l.off + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			l.off = j
		}
	}
	numEnd := l.off
	v, err := strconv.ParseFloat(s[start:numEnd], 64)
	if err != nil {
		return token{}, Errorf(start, "bad number %q", s[start:numEnd])
	}
	unitStart := l.off
	if l.off < len(s) && s[l.off] == '%' {
		l.off++
	} else {
		l.off = unitEnd(s, l.off)
		if l.off == unitStart {
			// "400 Gb/s", as rocelab prints it: a unit after one space
			i := unitStart
			for i < len(s) && s[i] == ' ' {
				i++
			}
			if j := unitEnd(s, i); i > unitStart && units.IsUnit(s[i:j]) {
				unitStart, l.off = i, j
			}
		}
	}
	t := token{kind: tNum, text: s[start:l.off], off: start, end: l.off}
	u := s[unitStart:l.off]
	if u == "" {
		t.q = Quantity{Value: v}
		return t, nil
	}
	q, known, err := unitQuantity(s[start:numEnd], v, u)
	if err != nil {
		if !known {
			return token{}, Errorf(unitStart, "%v", err)
		}
		return token{}, Errorf(start, "%v", err)
	}
	t.q = q
	return t, nil
}

// unitEnd returns where the run of unit characters from i ends.
func unitEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 'µ' || r == 'μ' || r < utf8.RuneSelf && (isNameByte(byte(r)) || r == '/') {
			i += size
			continue
		}
		break
	}
	return i
}

// unitQuantity converts a number with a unit to base units through
// core/units, the grammar topologies and faults read: a bare prefix (K, M,
// G, T) or bps, b/s is a rate, B or iB a size. known is false when the
// unit is unknown.
func unitQuantity(numText string, v float64, u string) (q Quantity, known bool, err error) {
	if u == "%" {
		return Quantity{Value: v / 100}, true, nil
	}
	kinds := []func(string) (Quantity, error){
		func(s string) (Quantity, error) {
			r, err := units.ParseRate(s)
			return Quantity{Value: float64(r), Unit: Rate}, err
		},
		func(s string) (Quantity, error) {
			n, err := units.ParseSize(s)
			return Quantity{Value: float64(n) * 8, Unit: Data}, err
		},
		func(s string) (Quantity, error) {
			d, err := units.ParseDuration(s)
			return Quantity{Value: d.Seconds(), Unit: Time}, err
		},
	}
	for _, parse := range kinds {
		if _, err := parse("1" + u); err == nil {
			q, err := parse(numText + u)
			return q, true, err
		}
	}
	for _, parse := range kinds[:2] {
		// "Mb" is bits, "GB/s" bytes per second: say so
		if _, err := parse("1" + u); strings.Contains(err.Error(), " is b") {
			return Quantity{}, false, fmt.Errorf("unit %q: %s", u, err.Error()[strings.Index(err.Error(), ": ")+2:])
		}
	}
	return Quantity{}, false, fmt.Errorf("unknown unit %q (sizes B, KB, MB, GB, KiB, MiB; rates K, M, G, T, Gbps, Gb/s; times ps, ns, us, ms, s; or %%)", u)
}
