package metrics_test

import (
	"net/http/httptest"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/internal/testenv"
)

// TestBuildInfoFrom: the version given wins, then the main module's, then
// "dev"; the revision is Go's vcs stamp, marked dirty when the tree was.
func TestBuildInfoFrom(t *testing.T) {
	stamped := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/rocelab/rocelab", Version: version}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "9364f97abc"}
	go_ := runtime.Version()
	for _, tc := range []struct {
		name    string
		version string
		bi      *debug.BuildInfo
		want    metrics.BuildInfo
	}{
		{"release", "v0.9.0", stamped("(devel)", rev), metrics.BuildInfo{Version: "v0.9.0", Revision: "9364f97abc", GoVersion: go_}},
		{"module version", "", stamped("v0.0.0-20250101-9364f97abc", rev), metrics.BuildInfo{Version: "v0.0.0-20250101-9364f97abc", Revision: "9364f97abc", GoVersion: go_}},
		{"devel", "", stamped("(devel)", rev), metrics.BuildInfo{Version: "dev", Revision: "9364f97abc", GoVersion: go_}},
		{"dirty tree", "dev", stamped("", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), metrics.BuildInfo{Version: "dev", Revision: "9364f97abc-dirty", GoVersion: go_}},
		{"clean tree", "dev", stamped("", rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), metrics.BuildInfo{Version: "dev", Revision: "9364f97abc", GoVersion: go_}},
		{"no vcs stamp", "v1", stamped(""), metrics.BuildInfo{Version: "v1", Revision: "unknown", GoVersion: go_}},
		{"no build info", "", nil, metrics.BuildInfo{Version: "dev", Revision: "unknown", GoVersion: go_}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, metrics.BuildInfoFrom(tc.version, tc.bi)); diff != "" {
				t.Errorf("BuildInfoFrom (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildInfoExposition: beside the lab's families, in one pedantic
// registry as `rocelab dashboard` serves them, rocelab_build_info is one
// gauge of value 1 with the three labels, and promtool finds nothing to
// say about the exposition.
func TestBuildInfoExposition(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	b := metrics.BuildInfo{Version: "v0.9.0", Revision: "9364f97abc", GoVersion: runtime.Version()}
	for _, c := range []prometheus.Collector{metrics.NewCollector(staticSource{simReading(t)}, nil), metrics.NewBuildInfoCollector(b)} {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, metrics.BuildInfoName) {
			lines = append(lines, l)
		}
	}
	want := []string{
		"# HELP rocelab_build_info A metric with a constant '1' value labeled by version, revision and goversion of the rocelab binary serving these metrics.",
		"# TYPE rocelab_build_info gauge",
		`rocelab_build_info{goversion="` + runtime.Version() + `",revision="9364f97abc",version="v0.9.0"} 1`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("rocelab_build_info in the exposition (-want +got):\n%s", diff)
	}
	cmd := exec.Command(testenv.RequireTool(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
