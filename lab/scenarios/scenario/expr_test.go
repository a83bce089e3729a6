package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
)

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
		var xe *expect.ExprError
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
			`nic_pfc_rx_frames_total{node="host1",prio="3"}`, `nic_pfc_rx_frames_total{node="host1:gpu0",prio="3"}`,
			`nic_pfc_rx_frames_total{node="host1:gpu1",prio="3"}`, `nic_pfc_rx_frames_total{node="host1:fe0",prio="3"}`}},
		{"pfc_rx(port=rtsw2:p1) > 0", []string{`switch_queue_pfc_rx_frames_total{node="rtsw2",port="0"}`}},
		{"retransmits(job=flow) == 0", []string{`qp_retransmits_total{node="host3:gpu0"}`, `qp_retransmits_total{node="host4:gpu1"}`}},
		{"busbw(job=train, size=4MB) > 0", []string{`collective_busbw_bytes_per_second{job="train",size="4194304"}`}},
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
