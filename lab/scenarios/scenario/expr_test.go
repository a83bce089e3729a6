package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"max(queue_depth(node=rtsw1, class=3)) < 1MB", "(max[queue_depth[node=rtsw1 class=3]] < 1MB)"},
		{`drops(node="rtsw1", port=p9) == 0`, "(drops[node=rtsw1 port=p9] == 0)"},
		{"p99(fct) < 2ms", "(p99[fct] < 2ms)"},
		{"x() == 80%", "(x[] == 0.8)"},
		{"a == 1e9", "(a == 1000000000)"},
		{"a < 400Gbps + 400Gb/s", "(a < (400 Gb/s + 400 Gb/s))"},
		{"a < 1.5us", "(a < 1.5us)"},
		{"a < 4KiB", "(a < 4.096KB)"},
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
		{"a >", 3, "want a number, a metric or (, got end of expression"},
	} {
		_, err := parseExpr(tc.src)
		var xe *ExprError
		if !errors.As(err, &xe) {
			t.Errorf("%q: got %v, want an ExprError", tc.src, err)
			continue
		}
		if xe.Offset != tc.off || !strings.Contains(xe.Msg, tc.msg) {
			t.Errorf("%q: got offset %d %q, want %d …%s…", tc.src, xe.Offset, xe.Msg, tc.off, tc.msg)
		}
	}
}

// testEnv is the laptop topology with two workloads.
func testEnv(t *testing.T) Env {
	t.Helper()
	s, err := Parse("env.yaml", []byte(`
topology: laptop
duration: 10ms
workloads:
  - {name: train, kind: collective, op: allreduce, ranks: "host[1-2]", sizes: "1MB:4MB"}
  - {name: flow, kind: perf, from: host3:gpu0, to: host4:gpu1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return Env{Topology: s.Topology, Workloads: s.Workloads, Duration: s.Duration}
}

func TestCompileErrors(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		src string
		off int
		msg string
	}{
		{"pfx_rx(node=rtsw1) > 0", 0, `unknown metric "pfx_rx"; did you mean pfc_rx?`},
		{"drops(class=loseless) == 0", 12, `label class: "loseless" is not a class; known values lossless, lossy, 0..7`},
		{"drops(clas=3) == 0", 6, "label clas: drops takes node, port, class, reason; did you mean class?"},
		{"drops(node=rtsw1, node=rtsw2) == 0", 18, "label node given twice"},
		{"drops(node=host1) == 0", 11, "nothing to measure (host1 is a host; this is counted by switches)"},
		{"cnp_rx(node=rtsw1) == 0", 12, "rtsw1 is a switch; this is counted by NICs"},
		{"drops(port=p1) == 0", 6, "label port: give node= too"},
		{"drops(node=rtsw1, port=p99) == 0", 23, `label port: rtsw1 has no port "p99"`},
		{"busbw(job=trian) > 1G", 10, `label job: no workload "trian" (did you mean "train"?)`},
		{"busbw(job=train, size=huge) > 1G", 22, "label size:"},
		{"drops(reason=nohead) > 0", 13, "unknown drop reason"},
		{"busbw(job=train) > 2ms", 17, "cannot compare busbw(job=train) (a rate) with 2ms (a time)"},
		{"queue_depth(node=rtsw1) < 100", 24, "write the number with a unit"},
		{"drops + 1ms > 0", 6, "cannot add drops (a number) with 1ms (a time)"},
		{"drops(node=rtsw1)", 0, "want a comparison like drops(node=rtsw1) > 0"},
		{"(drops > 0) + 1 > 0", 1, "want a number, got the condition drops > 0"},
		{"max(drops > 0) > 0", 4, "max takes a metric"},
		{"max(p99(fct)) > 0", 4, "max takes a metric, not p99"},
		{"sum(fct) > 0", 0, "sum: fct is summarised while the run goes; take one of p50, p90, p99, p999, min, max, avg, count"},
		{"drops == 0 and rate(fct(job=flow)) > 0", 15, "rate: fct is summarised"},
		{"max > 1", 0, "max takes a metric"},
		{"drops(1) > 0", 6, "drops takes label selectors like node=rtsw1, not 1"},
		{"line_rate(job=nope) > 0", 14, `no workload "nope"`},
		{"line_rate(class=3) > 0", 10, "label class: line_rate takes job, node or nic"},
		{"tx_bytes(nic=rtsw1:p1) > 0", 13, "label nic: rtsw1:p1 is a switch port"},
		{"tx_bytes(nic=host1) > 0", 13, "want node:port"},
		{"ecn_marks(node=rtsw1, class=3, reason=ttl) > 0", 31, "label reason: ecn_marks takes node, port, class"},
		{"retransmits(job=train, node=host3) > 0", 28, "workload train does not use that NIC"},
	} {
		_, err := CompileExpectation(tc.src, env)
		var xe *ExprError
		if !errors.As(err, &xe) {
			t.Errorf("%q: got %v, want an ExprError", tc.src, err)
			continue
		}
		if xe.Offset != tc.off || !strings.Contains(xe.Msg, tc.msg) {
			t.Errorf("%q: got offset %d %q, want %d …%s…", tc.src, xe.Offset, xe.Msg, tc.off, tc.msg)
		}
	}
}

func TestLookups(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"drops(class=lossless, node=rtsw1, port=p5) == 0", []string{`switch_drop_packets_total{node="rtsw1",port="4",tc="3"}`}},
		{"drops(class=lossy, reason=wred) == 0", []string{
			`switch_drop_packets_total{tc="0",reason="wred"}`, `switch_drop_packets_total{tc="1",reason="wred"}`,
			`switch_drop_packets_total{tc="2",reason="wred"}`, `switch_drop_packets_total{tc="4",reason="wred"}`,
			`switch_drop_packets_total{tc="5",reason="wred"}`, `switch_drop_packets_total{tc="6",reason="wred"}`,
			`switch_drop_packets_total{tc="7",reason="wred"}`}},
		{"pfc_rx(node=host1, class=3) > 0", []string{
			`nic_pfc_rx_total{node="host1",prio="3"}`, `nic_pfc_rx_total{node="host1:gpu0",prio="3"}`,
			`nic_pfc_rx_total{node="host1:gpu1",prio="3"}`, `nic_pfc_rx_total{node="host1:fe0",prio="3"}`}},
		{"pfc_rx(port=rtsw2:p1) > 0", []string{`switch_queue_pfc_rx_frames_total{node="rtsw2",port="0"}`}},
		{"retransmits(job=flow) == 0", []string{`qp_retransmits_total{node="host3:gpu0"}`, `qp_retransmits_total{node="host4:gpu1"}`}},
		{"busbw(job=train, size=4MB) > 0", []string{`collective_busbw_bps{job="train",size="4194304"}`}},
		{"fault_drops(kind=loss) > 0", []string{`fault_packets_total{event="dropped",kind="loss"}`}},
		{"tx_bytes > 0", []string{`switch_port_tx_bytes_total`, `nic_tx_bytes_total`}},
	} {
		x, err := CompileExpectation(tc.src, env)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		var got []string
		for _, l := range x.cond.Lookups() {
			var ls []string
			for _, m := range l.Match {
				ls = append(ls, fmt.Sprintf("%s=%q", m.Name, m.Value))
			}
			s := l.Sample
			if len(ls) > 0 {
				s += "{" + strings.Join(ls, ",") + "}"
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q lookups (-want +got):\n%s", tc.src, diff)
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
		{Quantity{8e6, Data}, "1MB"},
		{Quantity{8 * 1536, Data}, "1.536KB"},
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
