package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// synthetic builds report data: metrics × perMetric series of points
// readings each, recorded in a simlab store (series i of a metric peaks
// at i, so the hottest are the last), and finalMetrics × perFinal final
// samples (sample i worth i % 1000), and one perf job of flows flows.
func synthetic(metrics, perMetric, points, finalMetrics, perFinal, flows int) Data {
	const step = clock.Microsecond
	st := simlab.NewStore(step, points)
	for m := range metrics {
		name := fmt.Sprintf("metric_%d", m)
		for i := range perMetric {
			labels := []telemetry.Label{{Name: "node", Value: fmt.Sprintf("sw%d", i)}, {Name: "port", Value: "1"}}
			for p := range points {
				v := float64(i) * float64(p) / float64(max(points-1, 1))
				st.Record(name, labels, telemetry.Gauge, clock.Time(0).Add(clock.Duration(p)*step), v)
			}
		}
	}
	var final []telemetry.Sample
	for m := range finalMetrics {
		for i := range perFinal {
			final = append(final, telemetry.Sample{Name: fmt.Sprintf("final_%d", m),
				Labels: []telemetry.Label{{Name: "qp", Value: fmt.Sprint(i)}}, Value: float64(i % 1000)})
		}
	}
	job := Job{Name: "perm", Kind: "perf", Done: true}
	for i := range flows {
		job.Flows = append(job.Flows, Flow{From: fmt.Sprintf("h%d", i), To: fmt.Sprintf("h%d", i+1), Bytes: 1 << 20,
			GoodputBps: float64(1+(i*7919)%flows) * 1e8, Messages: 1, FCTMedian: 1e-4, FCTP99: 1e-4})
	}
	return Data{
		Verdict: Verdict{Scenario: &scenario.Scenario{Name: "synthetic", Source: "synthetic.yaml", Topology: &topologies.Topology{Name: "none"}},
			Seed: 7, Pass: true, FabricTime: clock.Duration(points) * step},
		Series: st.All(),
		Final:  final,
		Jobs:   []Job{job},
	}
}

// metricsDoc is metrics.json as a reader decodes it.
type metricsDoc struct {
	Scenario string `json:"scenario"`
	Detail   string `json:"detail"`
	Note     string `json:"note"`
	Series   []struct {
		Name    string            `json:"series"`
		Labels  map[string]string `json:"labels"`
		Points  []json.RawMessage `json:"points"`
		Omitted bool              `json:"points_omitted"`
		Count   int64             `json:"readings"`
		Max     float64           `json:"max"`
	} `json:"series"`
	Totals []finalTotal `json:"final_totals"`
	Final  []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Value  float64           `json:"value"`
	} `json:"final"`
	Jobs []Job `json:"jobs"`
}

// TestMetricsBounded writes the metrics files of a small and of a
// data-center sized lab: the small one has every point and sample, the
// large one (20,000 series) stays within a size that does not grow with
// the number of series' points, and keeps the hottest series and the
// largest samples.
func TestMetricsBounded(t *testing.T) {
	for _, tc := range []struct {
		name                                      string
		metrics, perMetric, points, fin, perFinal int
		wantDetail                                string
		wantRows, wantPointSeries, wantFinal      int
		maxJSON                                   int
	}{
		{name: "small", metrics: 4, perMetric: 25, points: 40, fin: 2, perFinal: 300,
			wantDetail: "full", wantRows: 4 * 25 * 40, wantPointSeries: 100, wantFinal: 600, maxJSON: 1 << 20},
		{name: "20k series", metrics: 5, perMetric: 4000, points: 40, fin: 3, perFinal: 20_000,
			wantDetail: "summarized", wantRows: 5 * hotSeries * 40, wantPointSeries: 5 * hotSeries, wantFinal: 3 * topSamples,
			maxJSON: 6 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := synthetic(tc.metrics, tc.perMetric, tc.points, tc.fin, tc.perFinal, 3)
			dir := t.TempDir()
			det := chooseDetail(d)
			if err := writeMetrics(dir, d, det); err != nil {
				t.Fatal(err)
			}
			rows := readCSV(t, filepath.Join(dir, "metrics.csv"))
			if len(rows)-1 != tc.wantRows {
				t.Errorf("metrics.csv has %d rows, want %d", len(rows)-1, tc.wantRows)
			}
			data, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > tc.maxJSON {
				t.Errorf("metrics.json is %d bytes, want at most %d", len(data), tc.maxJSON)
			}
			var doc metricsDoc
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("metrics.json: %v", err)
			}
			if doc.Detail != tc.wantDetail || (tc.wantDetail == "summarized") != (doc.Note != "") {
				t.Errorf("detail %q, note %q; want detail %q", doc.Detail, doc.Note, tc.wantDetail)
			}
			if len(doc.Series) != tc.metrics*tc.perMetric {
				t.Errorf("%d series, want all %d", len(doc.Series), tc.metrics*tc.perMetric)
			}
			withPoints := 0
			for _, s := range doc.Series {
				if s.Count != int64(tc.points) {
					t.Fatalf("series %s %v: %d readings, want %d", s.Name, s.Labels, s.Count, tc.points)
				}
				if len(s.Points) == 0 {
					if !s.Omitted {
						t.Errorf("series %s %v has no points and no points_omitted", s.Name, s.Labels)
					}
					continue
				}
				withPoints++
				// The hottest series of a metric are the last ones: sw<i>
				// with i >= perMetric-hotSeries.
				var i int
				fmt.Sscanf(s.Labels["node"], "sw%d", &i)
				if tc.wantDetail == "summarized" && i < tc.perMetric-hotSeries {
					t.Errorf("series %s %v kept its points but is not among the hottest", s.Name, s.Labels)
				}
			}
			if withPoints != tc.wantPointSeries {
				t.Errorf("%d series with points, want %d", withPoints, tc.wantPointSeries)
			}
			if len(doc.Final) != tc.wantFinal {
				t.Errorf("%d final samples, want %d", len(doc.Final), tc.wantFinal)
			}
			if len(doc.Jobs) != 1 || len(doc.Jobs[0].Flows) != 3 {
				t.Errorf("jobs %+v, want the one job with its 3 flows", doc.Jobs)
			}
		})
	}
}

// TestLargestFinal checks the summary of a large final snapshot: the
// largest non-zero samples of each metric, by decreasing value, ties in
// snapshot order, and exact totals.
func TestLargestFinal(t *testing.T) {
	d := synthetic(0, 0, 2, 2, 20_000, 0)
	d.Final = append(d.Final, telemetry.Sample{Name: "zero"})
	idx, totals := largestFinal(d, topSamples)
	if len(idx) != 2*topSamples {
		t.Fatalf("%d samples, want %d", len(idx), 2*topSamples)
	}
	var got []float64
	for _, i := range idx[:topSamples] {
		got = append(got, d.Final[i].Value)
	}
	// 20 samples each of 999, 998, 997, then the first 4 of 996.
	var want []float64
	for _, v := range []float64{999, 998, 997} {
		for range 20 {
			want = append(want, v)
		}
	}
	want = append(want, 996, 996, 996, 996)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if !slices.IsSorted(idx[:20]) || d.Final[idx[60]].Label("qp") != "996" {
		t.Errorf("ties are not in snapshot order: %v", idx[:topSamples])
	}
	wantTotals := []finalTotal{
		{Name: "final_0", Samples: 20_000, Nonzero: 19_980, Sum: 20 * 499_500, Min: 0, Max: 999},
		{Name: "final_1", Samples: 20_000, Nonzero: 19_980, Sum: 20 * 499_500, Min: 0, Max: 999},
		{Name: "zero", Samples: 1},
	}
	if diff := cmp.Diff(wantTotals, totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// TestWriteLarge writes a whole report of a 20,000-series lab with 2,000
// flows: every file stays small and summary.md's tables are bounded.
func TestWriteLarge(t *testing.T) {
	d := synthetic(5, 4000, 40, 3, 20_000, 2000)
	d.Problems = make([]string, 100)
	for i := range d.Problems {
		d.Problems[i] = fmt.Sprintf("problem %d", i)
	}
	dir := t.TempDir()
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, f := range []string{"metrics.csv", "metrics.json", "summary.md", "junit.xml"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if total > 8<<20 {
		t.Errorf("report files total %d bytes, want at most 8 MiB", total)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2000 flows, rate min 0.1 Gb/s", "… and 1968 more flows", "- … and 68 more\n", "metrics files are summarized"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("summary.md lacks %q", s)
		}
	}
	if n := bytes.Count(md, []byte("\n")); n > 200 {
		t.Errorf("summary.md has %d lines, want at most 200", n)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"time_s", "series", "labels", "value"}) {
		t.Fatalf("%s: header %v", path, rows)
	}
	return rows
}

// TestJSONFloat: numbers as encoding/json writes them, and null for the
// values JSON cannot carry.
func TestJSONFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {-1.5, "-1.5"}, {1e-7, "1e-7"}, {1e21, "1e+21"}, {4.06e6, "4060000"},
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"},
	} {
		got, err := json.Marshal(jsonFloat(tc.f))
		if err != nil || string(got) != tc.want {
			t.Errorf("jsonFloat(%v) = %s, %v; want %s", tc.f, got, err, tc.want)
		}
	}
}

// TestLabelMap checks label objects decode back, a repeated name keeping
// its last value.
func TestLabelMap(t *testing.T) {
	for _, tc := range []struct {
		labels []telemetry.Label
		want   map[string]string
	}{
		{nil, map[string]string{}},
		{[]telemetry.Label{{Name: "port", Value: "3"}, {Name: "node", Value: "z1-rtsw1"}}, map[string]string{"node": "z1-rtsw1", "port": "3"}},
		{[]telemetry.Label{{Name: "from", Value: `a"b\c`}, {Name: "to", Value: "x→y\n<&>"}}, map[string]string{"from": `a"b\c`, "to": "x→y\n<&>"}},
		{[]telemetry.Label{{Name: "a", Value: "1"}, {Name: "a", Value: "2"}}, map[string]string{"a": "2"}},
		{[]telemetry.Label{{Name: "bad", Value: "\xff"}}, map[string]string{"bad": "\ufffd"}},
	} {
		b, err := json.Marshal(labelMap(tc.labels))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %s: %v", tc.labels, b, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.labels, diff)
		}
	}
}
