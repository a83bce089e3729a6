package expect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// sexpr prints a syntax tree fully parenthesized.
func sexpr(src string, n node) string {
	switch n := n.(type) {
	case *numNode:
		return n.q.String()
	case *nameNode:
		return n.name
	case *parenNode:
		return sexpr(src, n.x)
	case *unNode:
		return fmt.Sprintf("(%s %s)", n.op, sexpr(src, n.x))
	case *binNode:
		return fmt.Sprintf("(%s %s %s)", sexpr(src, n.l), n.op, sexpr(src, n.r))
	case *callNode:
		var parts []string
		for _, s := range n.sels {
			parts = append(parts, s.Name+"="+s.Value)
		}
		for _, a := range n.args {
			parts = append(parts, sexpr(src, a))
		}
		return n.fn + "[" + strings.Join(parts, " ") + "]"
	}
	return "?"
}

func TestParsePrecedence(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"1 + 2 * 3", "(1 + (2 * 3))"},
		{"(1 + 2) * 3", "((1 + 2) * 3)"},
		{"1 - 2 - 3", "((1 - 2) - 3)"},
		{"8 / 4 / 2", "((8 / 4) / 2)"},
		{"-2 * 3", "((- 2) * 3)"},
		{"a > 1 and b < 2 or c == 3", "(((a > 1) and (b < 2)) or (c == 3))"},
		{"a > 1 or b < 2 and c == 3", "((a > 1) or ((b < 2) and (c == 3)))"},
		{"not a > 1 and b != 0", "((not (a > 1)) and (b != 0))"},
		{"a>=1 && b<=2 || !(c==3)", "(((a >= 1) and (b <= 2)) or (not (c == 3)))"},
		{"busbw(job=train) >= 0.8 * line_rate", "(busbw[job=train] >= (0.8 * line_rate))"},
		{"busbw(job=train) ≥ 0.8 × line_rate − 1G", "(busbw[job=train] >= ((0.8 * line_rate) - 1 Gb/s))"},
		{"max(queue_depth(node=rtsw1, class=3)) < 1MB", "(max[queue_depth[node=rtsw1 class=3]] < 1 MB)"},
		{`drops(node="rtsw1", port=p9) == 0`, "(drops[node=rtsw1 port=p9] == 0)"},
		{"p99(fct) < 2ms", "(p99[fct] < 2ms)"},
		{"x() == 80%", "(x[] == 0.8)"},
		{"a == 1e9", "(a == 1000000000)"},
		{"a < 400Gbps + 400Gb/s", "(a < (400 Gb/s + 400 Gb/s))"},
		{"a < 1.5us", "(a < 1.5us)"},
		{"a < 4KiB", "(a < 4 KiB)"},
		// issue 51: as rocelab prints them, and as topologies take them
		{"a < 400 Gb/s", "(a < 400 Gb/s)"},
		{"a < 1T", "(a < 1 Tb/s)"},
		{"a < 2.74 MB + 2.74M", "(a < (2.74 MB + 2.74 Mb/s))"},
		{"tx_bytes(nic=host1:gpu0) > 0", "(tx_bytes[nic=host1:gpu0] > 0)"},
	} {
		n, err := parseExpr(tc.src)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if got := sexpr(tc.src, n); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		src string
		off int
		msg string
	}{
		{"", 0, "empty expectation"},
		{"drops() = 0", 8, "use == to compare"},
		{"a < b < c", 6, "comparisons do not chain"},
		{"a > (1 + 2", 10, "want ) to close the ( at offset 4"},
		{"a > 2xs", 5, `unknown unit "xs"`},
		{"a > 1.5ps", 4, "not a whole number of picoseconds"},
		{"a > 1..2", 4, `bad number "1..2"`},
		{"a > $", 4, `unexpected '$'`},
		{"drops(node=) > 0", 11, "label node: missing value"},
		{`drops(node="rtsw1) > 0`, 11, `unclosed "`},
		{"drops(node=x y) > 0", 13, "want , or ) in the arguments of drops"},
		{"a > 1 b", 6, "unexpected name b"},
		{"a > 1 Mb", 6, "unexpected name Mb"},
		{"a > 1Mb", 5, `"Mb" is bits`},
		{"a > 1GB/s", 5, `"GB/s" is bytes`},
		{"a >", 3, "want a number, a metric or (, got end of expression"},
		// Hostile nesting fails at the first level past the bound, not with
		// a stack overflow (3 million parentheses crashed the runtime).
		{strings.Repeat("(", 3_000_000) + "1", maxDepth, "nested more than 200 levels deep"},
		{"a > " + strings.Repeat("-", 1_000_000) + "1", 4 + maxDepth, "nested more than 200 levels deep"},
		{strings.Repeat("not ", 1000) + "a > 1", 4 * maxDepth, "nested more than 200 levels deep"},
		{"a > " + strings.Repeat("f(", 500) + "1", 4 + 2*maxDepth, "nested more than 200 levels deep"},
		{"a > 1" + strings.Repeat(" + 1", 20_000), 5 + 4*maxTerms + 1, "more than 10000 operators"},
	} {
		_, err := parseExpr(tc.src)
		var xe *ExprError
		if !errors.As(err, &xe) {
			t.Errorf("%.60q: got %v, want an ExprError", tc.src, err)
			continue
		}
		if xe.Offset != tc.off || !strings.Contains(xe.Msg, tc.msg) {
			t.Errorf("%.60q: got offset %d %q, want %d …%s…", tc.src, xe.Offset, xe.Msg, tc.off, tc.msg)
		}
	}
}

func TestQuantityString(t *testing.T) {
	for _, tc := range []struct {
		q    Quantity
		want string
	}{
		{Quantity{312.4e9, Rate}, "312.4 Gb/s"},
		{Quantity{320e9, Rate}, "320 Gb/s"},
		{Quantity{8e6, Data}, "1 MB"},
		{Quantity{8 * 1536, Data}, "1.536 KB"},
		{Quantity{8 * 2.74e6, Data}, "2.74 MB"},
		{Quantity{8 * 4096, Data}, "4 KiB"},
		{Quantity{0.002, Time}, "2ms"},
		{Quantity{1.5e-6, Time}, "1.5us"},
		{Quantity{0, Time}, "0s"},
		{Quantity{12, Dimensionless}, "12"},
		{Quantity{1.0 / 3, Dimensionless}, "0.3333"},
		{Quantity{5, Frequency}, "5/s"},
		{Quantity{2, Unit{2, 0}}, "2 bit^2·s^0"},
	} {
		if got := tc.q.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.q, got, tc.want)
		}
	}
}
