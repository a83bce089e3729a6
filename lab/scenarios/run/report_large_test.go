package run

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// multizone runs testdata/multizone (a permutation over 3 zones of
// seed-24k's shape) in the simulator with a report, aggregated as agg
// says.
func multizone(t *testing.T, agg Aggregation) (*Outcome, string) {
	t.Helper()
	sc, err := scenario.Load("testdata/multizone/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	out, err := Sim(context.Background(), sc, Options{ReportDir: dir, Aggregate: agg})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Pass {
		t.Fatalf("the run failed: %v %v", out.Results, out.Problems)
	}
	return out, dir
}

// plotNames lists a report's plots (the .svg files' base names), sorted.
func plotNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "plots"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".svg"); ok {
			if _, err := os.Stat(filepath.Join(dir, "plots", name+".png")); err != nil {
				t.Errorf("plot %s: no png: %v", name, err)
			}
			out = append(out, name)
		}
	}
	return out
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// secs writes seconds as the report does (µs with one decimal below a
// millisecond).
func secs(s float64) string {
	if s >= 1e-3 {
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f µs", s*1e6)
}

// TestReportLargeFabric: an aggregated run's report has the large
// fabric's plots, with the numbers of the summary and the telemetry —
// the CDF's p50, p99 and max are flow_fct_seconds', the goodput CDF's
// slowest flow the jobs', the tier plots count the tier's queues, the
// pauses per tier add up to the summary's — and its sampler kept no
// series per queue, port or flow.
func TestReportLargeFabric(t *testing.T) {
	out, dir := multizone(t, AggregateOn)
	if !out.Aggregated {
		t.Fatal("Outcome.Aggregated false with AggregateOn")
	}
	for _, s := range out.Series {
		if s.Label("port") != "" || s.Label("from") != "" {
			t.Fatalf("aggregated run kept series %s %v", s.Name, s.Labels)
		}
	}
	got := plotNames(t, dir)
	// Pauses held CTSW and RTSW egress queues, never an ATSW's.
	want := []string{"fct-perm", "flows", "goodput-perm", "pfc-tiers", "heat-pfc-ctsw", "heat-pfc-rtsw"}
	for _, tier := range []string{"atsw", "ctsw", "rtsw"} {
		want = append(want, "heat-queues-"+tier, "heat-util-"+tier, "tier-queues-"+tier)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("plots %v, want %v", got, want)
	}
	final := out.Snapshots[len(out.Snapshots)-1].Samples
	stat := func(s string) float64 {
		return telemetry.Sum(final, "flow_fct_seconds", telemetry.Label{Name: "job", Value: "perm"}, telemetry.Label{Name: "stat", Value: s})
	}
	summary := readText(t, filepath.Join(dir, "summary.md"))
	fctSVG := readText(t, filepath.Join(dir, "plots", "fct-perm.svg"))
	line := fmt.Sprintf("Completion times of all 48 messages: p50 %s, p99 %s, max %s", secs(stat("p50")), secs(stat("p99")), secs(stat("max")))
	if !strings.Contains(summary, line) {
		t.Errorf("summary.md lacks %q", line)
	}
	for _, s := range []string{"p50", "p99", "max"} {
		if mark := s + " = " + secs(stat(s)); !strings.Contains(fctSVG, mark) {
			t.Errorf("fct-perm.svg lacks the mark %q (flow_fct_seconds)", mark)
		}
	}
	slowest := math.Inf(1)
	for _, f := range out.Jobs[0].Flows {
		slowest = min(slowest, f.GoodputBps/1e9)
	}
	if mark := fmt.Sprintf("min = %.1f Gb/s", slowest); !strings.Contains(readText(t, filepath.Join(dir, "plots", "goodput-perm.svg")), mark) {
		t.Errorf("goodput-perm.svg lacks %q", mark)
	}
	// The tier plots cover every queue of the tier: its ports × the
	// lossless classes (one).
	ports := map[string]int{}
	for _, n := range out.Scenario.Topology.Nodes {
		if n.Kind == topologies.KindSwitch {
			ports[string(n.Role)] += len(n.Ports)
		}
	}
	for tier, n := range ports {
		svg := readText(t, filepath.Join(dir, "plots", "tier-queues-"+tier+".svg"))
		if want := fmt.Sprintf("over its %d queues", n); !strings.Contains(svg, want) {
			t.Errorf("tier-queues-%s.svg lacks %q", tier, want)
		}
	}
	// The tiers' XOFF times add up to the summary's.
	var xoff float64
	for _, s := range out.Series {
		if s.Name == simlab.AggTierXOff {
			xoff += s.Totals.Last
		}
	}
	if sum := telemetry.Sum(final, "switch_pg_xoff_seconds_total"); sum <= 0 || math.Abs(xoff-sum) > 1e-9*sum {
		t.Errorf("tiers held their upstream in XOFF %g s, the telemetry says %g s", xoff, sum)
	}
	if !strings.Contains(summary, "A large fabric: the telemetry was aggregated") {
		t.Error("summary.md does not say the telemetry was aggregated")
	}
}

// TestReportSmallUnchanged: without aggregation (the default below
// simlab.LargeFabricPorts) the same run's report and example 01's draw
// the small lab's plots only, and say nothing of aggregation.
func TestReportSmallUnchanged(t *testing.T) {
	sc, err := scenario.Load("testdata/multizone/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if simlab.LargeFabric(sc.Topology) {
		t.Fatal("testdata/multizone counts as a large fabric")
	}
	mz, mzDir := multizone(t, AggregateAuto)
	ex, exDir := example01(t)
	for _, c := range []struct {
		name string
		out  *Outcome
		dir  string
	}{{"multizone", mz, mzDir}, {"example 01", ex, exDir}} {
		if c.out.Aggregated {
			t.Errorf("%s: aggregated", c.name)
		}
		if got, want := plotNames(t, c.dir), []string{"flows", "pfc", "queues"}; !slices.Equal(got, want) {
			t.Errorf("%s: plots %v, want %v", c.name, got, want)
		}
		if s := readText(t, filepath.Join(c.dir, "summary.md")); strings.Contains(s, "aggregated") || strings.Contains(s, "Completion times of all") {
			t.Errorf("%s: summary.md speaks of aggregation", c.name)
		}
	}
}
