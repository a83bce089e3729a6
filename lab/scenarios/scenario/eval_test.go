package scenario

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
)

func smp(name string, v float64, labels ...string) telemetry.Sample {
	s := telemetry.Sample{Name: name, Value: v}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Labels = append(s.Labels, telemetry.Label{Name: labels[i], Value: labels[i+1]})
	}
	return s
}

// fakeRun is two snapshots of a run on the laptop topology.
func fakeRun() expect.Snapshots {
	return expect.Snapshots{
		{At: clock.Time(clock.Millisecond), Samples: []telemetry.Sample{
			smp("switch_queue_depth_bytes", 1000, "node", "rtsw1", "port", "4", "tc", "3"),
			smp("switch_queue_depth_bytes", 50000, "node", "rtsw1", "port", "5", "tc", "3"),
			smp("nic_tx_bytes_total", 1e6, "node", "host1:gpu0"),
			smp("switch_queue_pfc_rx_frames_total", 2, "node", "rtsw1", "port", "4", "tc", "3"),
		}},
		{At: clock.Time(3 * clock.Millisecond), Samples: []telemetry.Sample{
			smp("switch_queue_depth_bytes", 300000, "node", "rtsw1", "port", "4", "tc", "3"),
			smp("switch_queue_depth_bytes", 0, "node", "rtsw1", "port", "5", "tc", "3"),
			smp("nic_tx_bytes_total", 51e6, "node", "host1:gpu0"),
			smp("switch_queue_pfc_rx_frames_total", 7, "node", "rtsw1", "port", "4", "tc", "3"),
			smp("switch_queue_pfc_rx_frames_total", 5, "node", "rtsw1", "port", "5", "tc", "3"),
			smp("switch_queue_pfc_rx_frames_total", 100, "node", "rtsw1", "port", "5", "tc", "0"),
			smp("switch_drop_packets_total", 4, "node", "rtsw2", "port", "1", "tc", "0", "reason", "egress_limit"),
			smp("collective_busbw_bytes_per_second", 100e9/8, "job", "train", "size", "1048576"),
			smp("collective_busbw_bytes_per_second", 312.4e9/8, "job", "train", "size", "4194304"),
			// fct: the runner's summaries of job flow (3 messages) and
			// of every job (5 messages).
			smp("flow_fct_seconds", 0.0015, "job", "flow", "stat", "p50"),
			smp("flow_fct_seconds", 0.003, "job", "flow", "stat", "p99"),
			smp("flow_fct_seconds", 0.003, "job", "flow", "stat", "max"),
			smp("flow_fct_seconds", 0.0018333333333333333, "job", "flow", "stat", "avg"),
			smp("flow_fct_seconds", 3, "job", "flow", "stat", "count"),
			smp("flow_fct_seconds", 0.0015, "stat", "p50"),
			smp("flow_fct_seconds", 0.004, "stat", "p99"),
			smp("flow_fct_seconds", 0.0019, "stat", "avg"),
			smp("flow_fct_seconds", 5, "stat", "count"),
			smp("flow_slowdown_ratio", 1.25, "job", "flow", "from", "host1:gpu0", "to", "host2:gpu0"),
			smp("flow_slowdown_ratio", 3.5, "job", "flow", "from", "host2:gpu0", "to", "host1:gpu0"),
		}},
	}
}

func TestEvaluate(t *testing.T) {
	env := testEnv(t)
	m := fakeRun()
	for _, tc := range []struct {
		src  string
		pass bool
		msg  string
	}{
		{"busbw(job=train) >= 0.8 * line_rate", false, "busbw(job=train) = 312.4 Gb/s, wanted >= 320 Gb/s (0.8 * line_rate)"},
		{"busbw(job=train) >= 0.75 * line_rate", true, "busbw(job=train) = 312.4 Gb/s, wanted >= 300 Gb/s (0.75 * line_rate)"},
		{"min(busbw(job=train)) > 100G", false, "min(busbw(job=train)) = 100 Gb/s, wanted > 100 Gb/s"},
		{"busbw(job=train, size=1MB) == 100G", true, "busbw(job=train, size=1MB) = 100 Gb/s, wanted == 100 Gb/s"},
		{"drops(class=lossless) == 0", true, "drops(class=lossless) = 0, wanted == 0"},
		{"drops(class=lossy) == 0", false, "drops(class=lossy) = 4, wanted == 0"},
		{"drops(reason=egress_limit, node=rtsw2, port=p2) == 4", true, ""},
		{"pfc_rx(node=rtsw1) > 0", true, "pfc_rx(node=rtsw1) = 112, wanted > 0"},
		{"pfc_rx(node=rtsw1, class=3) == 12", true, ""},
		{"pfc_rx(node=rtsw1, port=p5, class=lossless) == 7", true, ""},
		{"max(queue_depth(node=rtsw1)) < 300KB", false, "max(queue_depth(node=rtsw1)) = 300 KB, wanted < 300 KB"},
		{"queue_depth(node=rtsw1) <= 300KB", true, ""},
		{"avg(queue_depth(node=rtsw1, port=p5)) == 150.5KB", true, ""},
		{"last(queue_depth(node=rtsw1)) == 300KB", true, ""},
		{"rate(tx_bytes(nic=host1:gpu0)) == 200G", true, "rate(tx_bytes(nic=host1:gpu0)) = 200 Gb/s, wanted == 200 Gb/s"},
		{"tx_bytes(node=host1) / 3ms > 100G", true, ""},
		{"p99(fct) < 2ms", false, "p99(fct) = 4ms, wanted < 2ms"},
		{"p99(fct(job=flow)) < 3.5ms", true, "p99(fct(job=flow)) = 3ms, wanted < 3.5ms"},
		{"p50(fct(job=flow)) == 1.5ms", true, ""},
		{"fct(job=flow) < 2ms", true, "fct(job=flow) = 1.833ms, wanted < 2ms"},
		{"fct < 1.9ms", false, "fct = 1.9ms, wanted < 1.9ms"},
		{"count(fct) == 5", true, ""},
		{"count(fct(job=flow)) == 3", true, ""},
		{"flow_slowdown(job=flow) == 3.5", true, ""},
		{"min(flow_slowdown) == 1.25", true, ""},
		{"drops == 0 or pfc_rx > 100", true, "drops = 4, wanted == 0; pfc_rx = 112, wanted > 100"},
		{"drops == 0 and pfc_rx > 100", false, ""},
		{"not drops == 0", true, ""},
		{"paused_time(node=rtsw1) < 10% * duration", true, "paused_time(node=rtsw1) = 0s, wanted < 1ms (10% * duration)"},
		{"-drops < 0", true, ""},
		{"(drops + 1) * 2 == 10", true, ""},
	} {
		x, err := CompileExpectation(tc.src, env)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		r := x.Eval(m)
		if r.Err != nil {
			t.Errorf("%q: %v", tc.src, r.Err)
			continue
		}
		if r.Pass != tc.pass {
			t.Errorf("%q: pass = %v, want %v (%s)", tc.src, r.Pass, tc.pass, r.Message)
		}
		if tc.msg != "" && r.Message != tc.msg {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, r.Message, tc.msg)
		}
	}
}

type failing struct{}

func (failing) Lookup(string, []telemetry.Label) ([]expect.Series, error) {
	return nil, errors.New("node rtsw1 did not answer")
}

func TestEvaluateErrors(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		src string
		m   expect.Metrics
		err string
	}{
		{"busbw(job=flow) > 1G", fakeRun(), "no readings of busbw(job=flow)"},
		{"rate(tx_bytes(nic=host2:gpu0)) > 1G", expect.Snapshots{fakeRun()[1], {At: clock.Time(4 * clock.Millisecond), Samples: []telemetry.Sample{smp("nic_tx_bytes_total", 9, "node", "host2:gpu0")}}}, "needs readings at two moments"},
		{"drops > 0", failing{}, "drops: node rtsw1 did not answer"},
		{"drops / (drops - drops) > 0", fakeRun(), "division by zero"},
	} {
		x, err := CompileExpectation(tc.src, env)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		r := x.Eval(tc.m)
		if r.Pass || r.Err == nil || !strings.Contains(r.Err.Error(), tc.err) {
			t.Errorf("%q: got pass=%v err=%v, want an error …%s…", tc.src, r.Pass, r.Err, tc.err)
		}
	}
}

func TestSnapshotsLookup(t *testing.T) {
	got, err := fakeRun().Lookup("switch_queue_depth_bytes", []telemetry.Label{{Name: "port", Value: "4"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []expect.Series{{
		Labels: []telemetry.Label{{Name: "node", Value: "rtsw1"}, {Name: "port", Value: "4"}, {Name: "tc", Value: "3"}},
		Points: []expect.Point{{At: clock.Time(clock.Millisecond), Value: 1000}, {At: clock.Time(3 * clock.Millisecond), Value: 300000}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestScenarioEvaluateAndJUnit(t *testing.T) {
	s, err := Parse("ci.yaml", []byte(`name: ci
topology: laptop
duration: 10ms
workloads:
  - {name: train, kind: collective, op: allreduce, ranks: all, sizes: 4MB}
expect:
  - busbw(job=train) >= 0.8 * line_rate
  - drops(class=lossless) == 0
  - busbw(job=train, size=1MB) > 0
`))
	if err != nil {
		t.Fatal(err)
	}
	results := s.Evaluate(fakeRun())
	if len(results) != 3 || results[0].Pass || !results[1].Pass || results[2].Err != nil {
		t.Fatalf("results: %+v", results)
	}
	if results[0].Pos.Line != 7 || results[0].Pos.Col != 5 {
		t.Errorf("pos %v, want 7:5", results[0].Pos)
	}
	results[2].Err = errors.New("no readings") // one error case for the report
	results[2].Pass = false

	var buf bytes.Buffer
	if err := WriteJUnit(&buf, "ci", results); err != nil {
		t.Fatal(err)
	}
	type problem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Line      int      `xml:"line,attr"`
		Failure   *problem `xml:"failure"`
		Error     *problem `xml:"error"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []suite  `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("parse back: %v\n%s", err, buf.String())
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 1 {
		t.Fatalf("totals: %+v", doc)
	}
	su := doc.Suites[0]
	if su.Name != "ci" || su.Tests != 3 || su.Failures != 1 || su.Errors != 1 || su.Time == "" || len(su.Cases) != 3 {
		t.Fatalf("suite: %+v", su)
	}
	c0, c1, c2 := su.Cases[0], su.Cases[1], su.Cases[2]
	if c0.Name != "busbw(job=train) >= 0.8 * line_rate" || c0.Failure == nil || c0.Time == "" || c0.Line != 7 ||
		!strings.Contains(c0.Failure.Message, `expectation "busbw(job=train) >= 0.8 * line_rate" failed: busbw(job=train) = 312.4 Gb/s, wanted >= 320 Gb/s`) {
		t.Errorf("case 0: %+v %+v", c0, c0.Failure)
	}
	if c1.Failure != nil || c1.Error != nil {
		t.Errorf("case 1 should pass: %+v", c1)
	}
	if c2.Error == nil || !strings.Contains(c2.Error.Message, "no readings") {
		t.Errorf("case 2 should be an error: %+v", c2)
	}
}
