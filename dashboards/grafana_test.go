package dashboards

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rocelab/rocelab/dashboards/grafana"
	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/internal/testenv"
)

// TestGrafanaUpToDate: the committed dashboards are what the code
// generates (`make dashboards` refreshes them), and they are Grafana
// dashboards: a uid, a title, panels with Prometheus targets.
func TestGrafanaUpToDate(t *testing.T) {
	files, err := grafana.Generate()
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := filepath.Glob("grafana/json/*.json")
	var names []string
	for n := range files {
		names = append(names, filepath.Join("grafana/json", n))
	}
	sort.Strings(names)
	sort.Strings(onDisk)
	if len(onDisk) != len(names) {
		t.Errorf("committed %v, generated %v: run make dashboards", onDisk, names)
	}
	for n, b := range files {
		got, err := os.ReadFile(filepath.Join("grafana/json", n))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("grafana/json/%s differs from the generated dashboard: run make dashboards", n)
		}
		var d struct {
			UID    string `json:"uid"`
			Title  string `json:"title"`
			Panels []struct {
				Type    string `json:"type"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
			t.Errorf("%s: uid %q title %q, %d panels", n, d.UID, d.Title, len(d.Panels))
		}
		for _, p := range d.Panels {
			if len(p.Targets) == 0 || p.Targets[0].Expr == "" {
				t.Errorf("%s: a %s panel without a query", n, p.Type)
			}
		}
	}
}

// TestGrafanaQueriesParse runs every panel query through a real
// Prometheus's parser (an instant query on an empty server: a syntax
// error is a bad_data answer), and checks that each names only exported
// metrics.
func TestGrafanaQueriesParse(t *testing.T) {
	prom := startPrometheus(t, testenv.RequireTool(t, "prometheus"), "")
	known := map[string]bool{}
	for _, f := range metrics.Families() {
		known[f.Name] = true
	}
	exprs := []string{grafana.FaultAnnotation}
	for _, d := range grafana.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Exprs {
				exprs = append(exprs, q.Expr)
			}
		}
	}
	if r := prom.query(t, "rate(rocelab_node_up[1m]"); r.Status == "success" {
		t.Fatal("an unclosed parenthesis parsed: the check cannot fail")
	}
	for _, e := range exprs {
		if r := prom.query(t, grafana.Substitute(e, "x", "4s")); r.Status != "success" {
			t.Errorf("%s: %s (%s)", e, r.Error, r.ErrorType)
		}
		for _, name := range metricNames(e) {
			if !known[name] {
				t.Errorf("%s: %s is not an exported metric", e, name)
			}
		}
	}
}

// metricNames returns the rocelab_… identifiers in a PromQL expression.
func metricNames(expr string) []string {
	var out []string
	for i := 0; i < len(expr); i++ {
		if j := i + len("rocelab_"); j <= len(expr) && expr[i:j] == "rocelab_" && (i == 0 || !isIdent(expr[i-1])) {
			k := j
			for k < len(expr) && isIdent(expr[k]) {
				k++
			}
			out = append(out, expr[i:k])
			i = k
		}
	}
	return out
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
