package fidelity

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

// laptopScenarios are the scenario files (testdata) on the shipped laptop
// topology that the fidelity test runs in both drivers, and what each
// must show in the simulator for the comparison to mean something.
var laptopScenarios = []struct {
	file string
	// pfc: the switches must pause (XOFF) someone.
	pfc bool
}{
	{"laptop-incast.yaml", true},
	{"laptop-permutation.yaml", true},
	{"laptop-alltoall.yaml", false},
}

// laptopTxDepth is the messages each perf QP keeps posted, in both
// drivers: lab/scenarios/run's (the emulated endpoint's perf job defaults to 128
// and the simulator's to 32, so it is passed explicitly).
const laptopTxDepth = run.PerfTxDepth

// loadLaptop loads testdata/file and checks that it is what the fidelity
// test drives: the built-in laptop topology, a fixed scale, and one perf
// or collective workload starting at 0.
func loadLaptop(t *testing.T, file string) (*scenario.Scenario, *scenario.Workload) {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case sc.TopologyRef != "laptop":
		t.Fatalf("%s: topology %q, want the built-in laptop", file, sc.TopologyRef)
	case sc.Scale.Auto:
		t.Fatalf("%s: scale auto, want a fixed factor (the comparison sizes the simulator's headroom with it)", file)
	case len(sc.Workloads) != 1:
		t.Fatalf("%s: %d workloads, want 1", file, len(sc.Workloads))
	}
	w := sc.Workloads[0]
	if w.Kind != scenario.KindPerf && w.Kind != scenario.KindCollective || w.Start != 0 || len(sc.Faults) != 0 {
		t.Fatalf("%s: workload %s (%s, start %v), %d faults: want one perf or collective workload at 0 and no faults",
			file, w.Name, w.Kind, w.Start, len(sc.Faults))
	}
	return sc, w
}

// ccOf is the workload's congestion control as both drivers run it
// (lab/scenarios/run: none unless the file says).
func ccOf(w *scenario.Workload) string {
	if w.CC == "" {
		return "none"
	}
	return w.CC
}

// flowKey names a flow in Numbers.PerFlowGbps.
func flowKey(from, to string) string { return from + "->" + to }

// collFigures adds a collective's busbw (Gb/s) and time (µs) per size to
// n.Figures.
func collFigures(n *Numbers, res []collective.Result) {
	if n.Figures == nil {
		n.Figures = map[string]float64{}
	}
	for _, r := range res {
		size := strconv.FormatInt(r.Size>>10, 10) + "KiB"
		n.Figures[r.Op+" "+size+" busbw Gb/s"] = 8 * r.BusBW
		n.Figures[r.Op+" "+size+" time us"] = r.TimeUs
	}
}

// simRun is what simulating one scenario gave: the numbers compared, the
// bytes every inter-switch link direction carried (the paths ECMP took),
// and the switch drops.
type simRun struct {
	Numbers
	links  map[string]float64
	pauses map[string]pgPause
	drops  float64
}

// pgPause is what the lossless priority groups of one switch port did:
// XON and XOFF signals sent (refreshes count as XOFF) and time in XOFF.
type pgPause struct{ xon, xoff, seconds float64 }

// simulateLaptop runs sc's workload w in the simulator with every switch
// configured as lab/emulation/node configures the emulated switch processes at
// sc's scale — including the headroom the emulation adds for loop stalls
// — so that the comparison is of the drivers, not of two
// configurations. It runs until every job finished.
func simulateLaptop(t *testing.T, sc *scenario.Scenario, w *scenario.Workload) simRun {
	t.Helper()
	configure := func(n *topologies.Node, c *switchmodel.Config) {
		cfg, err := nodeplan.Switch(n, nil, sc.Scale.Factor, sc.Seed, "/unused.sock", nodeplan.LagBudget)
		if err != nil {
			t.Fatalf("switch config of %s: %v", n.Name, err)
		}
		c.PFC.Headroom = cfg.Switch.PFC.Headroom
	}
	lab, err := simlab.Build(sc.Topology, simlab.Options{Seed: sc.Seed, Fabric: fabric.SimOptions{Configure: configure}})
	if err != nil {
		t.Fatal(err)
	}
	res := simRun{Numbers: Numbers{PerFlowGbps: map[string]float64{}}}
	var (
		perf *simlab.PerfJob
		coll *simlab.CollJob
	)
	switch w.Kind {
	case scenario.KindPerf:
		spec := simlab.PerfSpec{Name: w.Name, Op: w.PerfOp.String(), Pairwise: true, Size: int(w.Size),
			Iterations: w.Iters, Duration: w.Duration, QPs: w.QPs, TxDepth: laptopTxDepth,
			Mode: w.Mode.String(), CC: ccOf(w)}
		if w.Duration > 0 {
			spec.Iterations = 0
		}
		for _, f := range w.Flows {
			spec.From = append(spec.From, scenario.PortName(f.From))
			spec.To = append(spec.To, scenario.PortName(f.To))
		}
		perf, err = lab.Perf(spec)
	case scenario.KindCollective:
		spec := simlab.CollSpec{Name: w.Name, Op: w.CollectiveOp.String(), Sizes: w.Sizes, Iters: w.Iters,
			Warmup: w.Warmup, Mode: w.Mode.String(), CC: ccOf(w)}
		if spec.Warmup == 0 {
			spec.Warmup = -1 // simlab's 0 means its default (1); the file's 0 means none
		}
		spec.Ranks = scenario.PortNames(w.Ranks)
		coll, err = lab.Collective(spec)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.RunUntilIdle(100 * max(sc.Duration, clock.Millisecond)); err != nil {
		t.Fatal(err)
	}
	switch {
	case perf != nil:
		if err := perf.Err(); err != nil {
			t.Fatal(err)
		}
		for _, f := range perf.Results() {
			// A timed job's: what arrived within its window, over
			// the window, as the endpoint node's perf job counts it.
			res.PerFlowGbps[flowKey(f.From, f.To)] = f.GoodputGbps
		}
	case coll != nil:
		if err := coll.Err(); err != nil {
			t.Fatal(err)
		}
		collFigures(&res.Numbers, coll.Results())
	}
	samples := lab.Samples()
	res.PauseFrames = telemetry.Sum(samples, "switch_port_pfc_tx_frames_total")
	res.XOffSeconds = telemetry.Sum(samples, "switch_pg_xoff_seconds_total")
	res.drops = telemetry.Sum(samples, "switch_drop_packets_total")
	res.links = linkBytes(sc.Topology, samples, nil)
	res.pauses = pauses(sc.Topology, samples, nil)
	return res
}

// pauses returns what each switch port's priority groups did with PFC
// ("rtsw1:p1"), for the ports that sent any; before, if not nil, is
// subtracted.
func pauses(topo *topologies.Topology, after, before []telemetry.Sample) map[string]pgPause {
	out := map[string]pgPause{}
	for _, n := range topo.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		for i, p := range n.Ports {
			m := []telemetry.Label{{Name: "node", Value: n.Name}, {Name: "port", Value: strconv.Itoa(i)}}
			sum := func(name string) float64 {
				v := telemetry.Sum(after, name, m...)
				if before != nil {
					v -= telemetry.Sum(before, name, m...)
				}
				return v
			}
			g := pgPause{sum("switch_pg_pfc_xon_frames_total"), sum("switch_pg_pfc_xoff_frames_total"), sum("switch_pg_xoff_seconds_total")}
			if g.xon+g.xoff > 0 {
				out[n.Name+":"+p.Name] = g
			}
		}
	}
	return out
}

// pauseLines describes, per switch port that sent PFC in either run, the
// XOFF and XON signals and the time in XOFF of both.
func pauseLines(emu, sim map[string]pgPause) []string {
	var out []string
	for _, k := range keys(emu, sim) {
		e, s := emu[k], sim[k]
		out = append(out, fmt.Sprintf("pfc  %-10s emu xoff %4.0f xon %4.0f %8.1f us  sim xoff %4.0f xon %4.0f %8.1f us",
			k, e.xoff, e.xon, e.seconds*1e6, s.xoff, s.xon, s.seconds*1e6))
	}
	return out
}

// linkBytes returns the bytes each inter-switch link direction carried
// ("rtsw1:p5->ctsw1"), from the switches' port counters; before, if not
// nil, is subtracted (counters read before the workload).
func linkBytes(topo *topologies.Topology, after, before []telemetry.Sample) map[string]float64 {
	out := map[string]float64{}
	for _, n := range topo.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		for i, p := range n.Ports {
			if p.Peer == nil || p.Peer.Node.Kind != topologies.KindSwitch {
				continue
			}
			m := []telemetry.Label{{Name: "node", Value: n.Name}, {Name: "port", Value: strconv.Itoa(i)}}
			v := telemetry.Sum(after, "switch_port_tx_bytes_total", m...)
			if before != nil {
				v -= telemetry.Sum(before, "switch_port_tx_bytes_total", m...)
			}
			out[n.Name+":"+p.Name+"->"+p.Peer.Node.Name] = v
		}
	}
	return out
}

// linkLines describes the inter-switch link directions that carried at
// least 1 % of the busiest one, in either run: where ECMP put the flows.
func linkLines(emu, sim map[string]float64) []string {
	var top float64
	for _, m := range []map[string]float64{emu, sim} {
		for _, v := range m {
			top = max(top, v)
		}
	}
	var out []string
	for _, k := range keys(emu, sim) {
		if max(emu[k], sim[k]) < top/100 {
			continue
		}
		out = append(out, fmt.Sprintf("link %-18s emu %8.2f MB  sim %8.2f MB", k, emu[k]/1e6, sim[k]/1e6))
	}
	return out
}

// TestLaptopScenariosSimulated checks, without root, that the laptop
// scenarios the fidelity test compares do what they are there for in the
// simulator: their traffic crosses the spine (the CTSWs forward it), the
// PFC ones pause (XOFF time > 0), nothing is dropped, and every flow or
// collective size has a result.
func TestLaptopScenariosSimulated(t *testing.T) {
	for _, s := range laptopScenarios {
		t.Run(s.file, func(t *testing.T) {
			sc, w := loadLaptop(t, s.file)
			got := simulateLaptop(t, sc, w)
			var spine float64
			for k, v := range got.links {
				if strings.HasPrefix(k, "ctsw") {
					spine += v
				}
			}
			if spine == 0 {
				t.Errorf("no traffic crossed the spine: %v", got.links)
			}
			if s.pfc && got.XOffSeconds == 0 {
				t.Errorf("no PFC: the switches held nobody in XOFF")
			}
			if got.drops != 0 {
				t.Errorf("%v switch drops", got.drops)
			}
			switch w.Kind {
			case scenario.KindPerf:
				var want []string
				for _, f := range w.Flows {
					want = append(want, flowKey(scenario.PortName(f.From), scenario.PortName(f.To)))
				}
				var have []string
				for k, v := range got.PerFlowGbps {
					if v > 0 {
						have = append(have, k)
					}
				}
				slices.Sort(want)
				slices.Sort(have)
				if !slices.Equal(have, want) {
					t.Errorf("flows with goodput %q, want %q", have, want)
				}
			case scenario.KindCollective:
				if len(got.Figures) != 2*len(w.Sizes) {
					t.Errorf("figures %v, want busbw and time of %d sizes", got.Figures, len(w.Sizes))
				}
			}
			t.Logf("simulated: %+v", got.Numbers)
		})
	}
}
