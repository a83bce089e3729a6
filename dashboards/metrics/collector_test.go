package metrics_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/tools/stats"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// simReading runs a 3:1 incast on the laptop topology in the simulator
// (the same switch and NIC models the emulation's nodes run) and reads
// every node as the lab source would: a switch's samples, or a host's NICs'.
func simReading(t *testing.T) metrics.Reading {
	t.Helper()
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	l, err := simlab.Build(topo, simlab.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Incast("host4:gpu1", simlab.PerfSpec{Name: "incast", From: []string{"host1:gpu0", "host2:gpu0", "host3:gpu0"},
		Op: "write", Size: 64 << 10, TxDepth: 128, Duration: clock.Millisecond}); err != nil {
		t.Fatal(err)
	}
	l.RunFor(600 * clock.Microsecond) // mid-incast: queues and pauses are live
	r := metrics.Reading{Lab: "sim"}
	for _, n := range topo.Nodes {
		nr := metrics.NodeReading{Name: n.Name, Kind: string(n.Kind), Up: true, FabricTime: l.Now().Seconds()}
		for _, p := range n.Ports {
			nr.Ports = append(nr.Ports, metrics.Port{Name: p.Name, Rate: p.Rate})
		}
		var srcs []telemetry.Source
		switch n.Kind {
		case topologies.KindSwitch:
			if sw := l.Switch(n.Name); sw != nil {
				srcs = append(srcs, sw)
			}
		case topologies.KindHost:
			for _, p := range n.Ports {
				if nic := l.NIC(n.Name + ":" + p.Name); nic != nil {
					srcs = append(srcs, nic)
				}
			}
		}
		if len(srcs) == 0 {
			continue
		}
		nr.Samples = telemetry.Gather(srcs...)
		nr.Samples = append(nr.Samples, telemetry.Sample{Name: "emu_fabric_seconds_total", Kind: telemetry.Gauge,
			Labels: []telemetry.Label{{Name: "node", Value: n.Name}}, Value: l.Now().Seconds()})
		r.Nodes = append(r.Nodes, nr)
	}
	r.Nodes = append(r.Nodes, metrics.NodeReading{Name: "ghost", Kind: "switch", Err: "dial: connection refused"})
	return r
}

// TestConvert: the incast's numbers come out under the model's names, with
// port names as the CLI writes them and an endpoint's host:nic split; a
// dead node is up=0 and nothing else.
func TestConvert(t *testing.T) {
	ms := metrics.Convert(simReading(t))
	get := func(name string, labels ...string) (float64, bool) {
		var sum float64
		found := false
	next:
		for _, m := range ms {
			if m.Name() != name {
				continue
			}
			for i, want := range labels {
				if want != "*" && (i+1 >= len(m.Labels) || m.Labels[i+1] != want) {
					continue next
				}
			}
			sum += m.Value
			found = true
		}
		return sum, found
	}
	for _, tc := range []struct {
		what   string
		name   string
		labels []string
		check  func(v float64) bool
	}{
		{"rtsw2 holds its upstream in XOFF", "rocelab_switch_pg_xoff_seconds_total", []string{"rtsw2", "*", "3"}, func(v float64) bool { return v > 0 }},
		{"rtsw2 sent pause frames", "rocelab_switch_pg_pfc_xoff_frames_total", []string{"rtsw2", "*", "3"}, func(v float64) bool { return v > 0 }},
		{"a queue on rtsw2 is deep", "rocelab_switch_queue_depth_bytes", []string{"rtsw2", "*", "3"}, func(v float64) bool { return v > 0 }},
		{"ports are named p1…", "rocelab_switch_port_tx_bytes_total", []string{"rtsw2", "p1"}, func(v float64) bool { return v >= 0 }},
		{"host1:gpu0 sent bytes", "rocelab_nic_tx_bytes_total", []string{"host1", "gpu0"}, func(v float64) bool { return v > 0 }},
		{"QP counters per NIC and QP", "rocelab_qp_tx_bytes_total", []string{"host1", "gpu0", "*"}, func(v float64) bool { return v > 0 }},
		{"CC rate in bytes/s", "rocelab_qp_path_rate_bytes_per_second", []string{"host1", "gpu0", "*", "*"}, func(v float64) bool { return v > 0 && v <= 50e9 }},
		{"an idle NIC's counters are exported", "rocelab_nic_cnp_rx_total", []string{"host2", "gpu1"}, func(v float64) bool { return v == 0 }},
		{"port speed in bytes/s", "rocelab_port_speed_bytes_per_second", []string{"rtsw2", "p1"}, func(v float64) bool { return v == 50e9 }},
		{"the dead node is down", "rocelab_node_up", []string{"ghost", "switch"}, func(v float64) bool { return v == 0 }},
		{"live nodes are up", "rocelab_node_up", []string{"rtsw1", "switch"}, func(v float64) bool { return v == 1 }},
	} {
		v, ok := get(tc.name, tc.labels...)
		if !ok || !tc.check(v) {
			t.Errorf("%s: %s%v = %v (found %v)", tc.what, tc.name, tc.labels, v, ok)
		}
	}
	for _, m := range ms {
		if m.Labels[0] != "sim" {
			t.Fatalf("%s: lab label %q", m.Name(), m.Labels[0])
		}
		if len(m.Labels) > 1 && m.Labels[1] == "ghost" && m.Name() != "rocelab_node_up" {
			t.Errorf("dead node exported %s", m.Name())
		}
	}
}

// staticSource is a Source that returns one reading.
type staticSource struct{ r metrics.Reading }

func (s staticSource) Read(context.Context) (metrics.Reading, error) { return s.r, nil }

// TestExposition: the collector registers in a pedantic registry (every
// family's labels consistent) and its exposition passes promtool's lint.
func TestExposition(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(metrics.NewCollector(staticSource{simReading(t)}, nil)); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	if len(mfs) < 30 {
		t.Errorf("only %d families gathered", len(mfs))
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	promtool := testenv.RequireTool(t, "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestDocsListEveryFamily: docs/metrics.md names every exported family.
func TestDocsListEveryFamily(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range metrics.Families() {
		if !strings.Contains(string(doc), "`"+f.Name+"`") {
			t.Errorf("docs/metrics.md does not list %s", f.Name)
		}
	}
}

// TestStatsSpeaksMetrics: `rocelab stats -o json` and /metrics are one
// vocabulary. The stats report of every node of the incast, as JSON, names
// each counter and gauge by a family /metrics exports for the same
// samples (minus rocelab_), and a map's keys are values of that family's
// labels; only identities and the derived rates (…_per_second) are
// names of stats' own.
func TestStatsSpeaksMetrics(t *testing.T) {
	r := simReading(t)
	exported := map[string]map[string]bool{} // family -> its label values
	for _, m := range metrics.Convert(r) {
		name := strings.TrimPrefix(m.Name(), "rocelab_")
		if exported[name] == nil {
			exported[name] = map[string]bool{}
		}
		for _, v := range m.Labels {
			exported[name][v] = true
		}
	}
	identity := map[string]bool{"node": true, "port": true, "ifname": true, "tc": true, "qp": true}
	seen := map[string]bool{}
	for _, n := range r.Nodes {
		if !n.Up {
			continue
		}
		rep := stats.Compute(stats.Snapshot{}, stats.Snapshot{Node: n.Name, Samples: n.Samples})
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var rows map[string]json.RawMessage
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"ports", "queues", "nics", "qps"} {
			var list []map[string]any
			if err := json.Unmarshal(rows[table], &list); err != nil && rows[table] != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for _, row := range list {
				for key, v := range row {
					if identity[key] || strings.HasSuffix(key, "_per_second") {
						continue
					}
					seen[key] = true
					fam, ok := exported[key]
					if !ok {
						t.Errorf("%s %s: stats -o json says %q, /metrics has no rocelab_%s", n.Name, table, key, key)
						continue
					}
					if byLabel, isMap := v.(map[string]any); isMap {
						for lv := range byLabel {
							if !fam[lv] && lv != "dropped" {
								t.Errorf("%s %s: %s[%q]: no exported %s has that label value", n.Name, table, key, lv, key)
							}
						}
					}
				}
			}
		}
	}
	// The incast fills every kind of row: a table that went missing
	// would pass vacuously.
	for _, want := range []string{"switch_queue_depth_bytes", "switch_pg_pfc_xoff_frames_total", "nic_cnp_rx_total", "qp_retransmits_total"} {
		if !seen[want] {
			t.Errorf("no stats row carried %s", want)
		}
	}
}
