package run

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/topologies"
)

// example01 runs examples/01-incast-hol in the simulator with a report
// (issue 51's example: sw2's p5 is its first port, sw1's p5 its fifth).
func example01(t *testing.T) (*Outcome, string) {
	t.Helper()
	sc, err := scenario.Load("../../../examples/01-incast-hol/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	out, err := Sim(context.Background(), sc, Options{ReportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return out, dir
}

// TestReportPortNames: every file of a report names a switch port as the
// topology does (port=p5), never by its position on the switch (sw2's p5
// was port=0 in metrics.csv, sw1's port=4).
func TestReportPortNames(t *testing.T) {
	out, dir := example01(t)
	topo := out.Scenario.Topology
	check := func(file, node, port string) {
		t.Helper()
		n := topo.Node(node)
		if n == nil || n.Kind != topologies.KindSwitch {
			return
		}
		if n.Port(port) == nil {
			t.Errorf("%s: node=%s port=%s: not a port name of %s (%v)", file, node, port, node, scenario.PortNames(n.Ports))
		}
	}
	f, err := os.Open(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows[1:] {
		labels := map[string]string{}
		for _, kv := range strings.Split(r[2], ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
		if p, ok := labels["port"]; ok {
			seen++
			check("metrics.csv", labels["node"], p)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Series []struct{ Labels map[string]string } `json:"series"`
		Final  []struct{ Labels map[string]string } `json:"final"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(doc.Series, doc.Final...) {
		if p, ok := s.Labels["port"]; ok {
			seen++
			check("metrics.json", s.Labels["node"], p)
		}
	}
	if seen == 0 {
		t.Fatal("no port labels in the metrics files")
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "| sw1:p5→sw2 tc3 |") {
		t.Errorf("summary.md does not name sw1's uplink sw1:p5→sw2:\n%s", sum)
	}
}

// summaryTime reads a time row of summary.md ("| name | 913.4 µs |").
func summaryTime(t *testing.T, summary, row string) clock.Duration {
	t.Helper()
	m := regexp.MustCompile(`\| ` + regexp.QuoteMeta(row) + ` \| ([0-9.]+) (ms|µs|ns) \|`).FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("summary.md has no row %q", row)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string]float64{"ms": 1e9, "µs": 1e6, "ns": 1e3}[m[2]]
	return clock.Duration(v * unit) // picoseconds
}

// TestReportPauseTotals: the PFC plot's XOFF bands add up to the
// summary's "time switches held upstream in XOFF" (the emulated report
// of example 01 said 914 µs in the summary and drew about 0.4 ms; the
// simulated one drew 1.5 ms, every 8 µs point whose readings saw an XOFF
// drawn whole). Tolerance: the summary's rounding (0.05 µs) plus 0.1 %.
func TestReportPauseTotals(t *testing.T) {
	out, dir := example01(t)
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := summaryTime(t, string(sum), "time switches held upstream in XOFF")
	if want <= 100*clock.Microsecond {
		t.Fatalf("summary's XOFF time %v: example 01 pauses sw1 for most of its run", want)
	}
	var got clock.Duration
	for _, r := range report.Pauses(out.reportData()) {
		if r.Kind == report.PauseXOFF {
			got += r.Total()
		}
	}
	tol := 50*clock.Nanosecond + want/1000
	if d := got - want; d > tol || d < -tol {
		t.Errorf("plots/pfc XOFF bands add up to %v, summary.md says %v (tolerance %v)", got, want, tol)
	}
	// The drawing before issue 51, from the 0/1 states alone.
	d := out.reportData()
	var states clock.Duration
	for _, s := range d.Series {
		if strings.HasSuffix(s.Name, "_seconds_total") {
			continue
		}
		if s.Name == "switch_pg_xoff" {
			for _, p := range s.Points {
				if p.Max > 0 {
					states += s.Width
				}
			}
		}
	}
	t.Logf("XOFF: summary %v, plot %v; drawn from the sampled states it was %v", want, got, states)
}

// TestReportPauseOrder: a switch port's egress is paused only once its
// peer sends XOFF: in plots/pfc, sw1:p5's paused band does not start
// before sw2:p5's XOFF band (the emulated report drew the receiver paused
// before the sender's XOFF). Within one reading interval the two cannot
// be told apart (example 01's first XOFF and the pause it causes end
// inside one 4 µs interval, the same time apart), so they may start
// together.
func TestReportPauseOrder(t *testing.T) {
	out, _ := example01(t)
	checkPauseOrder(t, out.Scenario.Topology, report.Pauses(out.reportData()), 1)
}

// checkPauseOrder fails t unless no egress pause row of rows starts
// before the XOFF row of the peer port, and at least want pairs were
// found.
func checkPauseOrder(t *testing.T, topo *topologies.Topology, rows []report.PauseRow, want int) {
	t.Helper()
	xoff := map[string]report.PauseRow{}
	for _, r := range rows {
		if r.Kind == report.PauseXOFF {
			xoff[r.Node+":"+portOf(topo, r.Node, r.Port)+":"+r.Class] = r
		}
	}
	pairs := 0
	for _, r := range rows {
		if r.Kind != report.PauseEgress {
			continue
		}
		n := topo.Node(r.Node)
		p := n.Port(portOf(topo, r.Node, r.Port))
		if p == nil || p.Peer == nil {
			t.Fatalf("row %s: no such port", r.Name)
		}
		x, ok := xoff[p.Peer.Node.Name+":"+p.Peer.Name+":"+r.Class]
		if !ok {
			t.Errorf("%s is paused, but its peer %s never sent XOFF", r.Name, scenario.PortName(p.Peer))
			continue
		}
		pairs++
		if r.Spans[0].From < x.Spans[0].From {
			t.Errorf("%s paused from %v, its peer's XOFF (%s) from %v", r.Name, r.Spans[0].From, x.Name, x.Spans[0].From)
		}
	}
	if pairs < want {
		t.Errorf("%d pause rows with their XOFF rows, want %d", pairs, want)
	}
}

// portOf is the topology name of the port labelled port on node: its
// name, or its position on the node as the switch model labels it.
func portOf(topo *topologies.Topology, node, port string) string {
	n := topo.Node(node)
	if n == nil || n.Port(port) != nil {
		return port
	}
	if i, err := strconv.Atoi(port); err == nil && i >= 0 && i < len(n.Ports) {
		return n.Ports[i].Name
	}
	return port
}

// TestReportFlowsFromStart: a flow's rate series has no point before its
// workload starts (example 01's flows start at 100 µs).
func TestReportFlowsFromStart(t *testing.T) {
	out, _ := example01(t)
	starts := map[string]clock.Duration{}
	for _, w := range out.Scenario.Workloads {
		starts[w.Name] = w.Start
	}
	n := 0
	for _, s := range out.Series {
		if s.Name != "perf_flow_rate_bytes_per_second" {
			continue
		}
		n++
		start := clock.Time(0).Add(starts[s.Label("job")])
		if len(s.Points) == 0 || s.Points[0].T < start {
			t.Errorf("flow %v: first point at %v, the workload starts at %v", s.Labels, s.Points[0].T, start)
		}
	}
	if n == 0 {
		t.Fatal("no flow series")
	}
}
