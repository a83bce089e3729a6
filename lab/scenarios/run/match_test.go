package run

import (
	"context"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/switchmodel/fabric"
)

// matchIncast is a 3:1 timed incast across the laptop fabric's spine: at
// its end 32 messages of 256 KB per QP are still queued, which drain well
// past the scenario's duration.
const matchIncast = `
name: match-incast
topology: laptop
scale: 10000
duration: 300us
workloads:
  - {name: incast, kind: perf, from: "host1:gpu0,host1:gpu1,host2:gpu0", to: host3:gpu0,
     size: 256KB, duration: 200us, cc: none}
`

func TestEmulationScale(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(matchIncast))
	if err != nil {
		t.Fatal(err)
	}
	if got := emulationScale(emulatedLab(sc, Options{})); got != 10000 {
		t.Errorf("scenario's scale: got %d, want 10000", got)
	}
	if got := emulationScale(emulatedLab(sc, Options{Scale: 77})); got != 77 {
		t.Errorf("override: got %d, want 77", got)
	}
	sc.Scale = scenario.Scale{Auto: true}
	perNode := emulationScale(emulatedLab(sc, Options{}))
	if perNode < deploy.MinAutoScale {
		t.Errorf("auto on the laptop topology: got %d, want at least MinAutoScale %d", perNode, deploy.MinAutoScale)
	}
	// One group, links in memory: what deploy picks for that lab, from
	// the group's capacity, not the per-CPU one.
	oneLoop := emulationScale(emulatedLab(sc, Options{NodeGroups: 1}))
	if want := deploy.AutoScaleOneGroup(sc.Topology, deploy.DefaultGroupCapacityPPS); oneLoop != want || oneLoop >= perNode {
		t.Errorf("auto in one group: got %d, want deploy's %d (below the per-node %d)", oneLoop, want, perNode)
	}
	if got := emulationScale(emulatedLab(sc, Options{NodeGroups: 1, SocketLinks: true})); got != perNode {
		t.Errorf("auto in one group with socket links: got %d, want the per-node %d", got, perNode)
	}
}

// TestEmulatedSwitches checks that the hook gives the simulator's switches
// the emulated switch process's configuration, whose headroom grows as
// the scale shrinks (a stall of LagBudget is more fabric time).
func TestEmulatedSwitches(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(matchIncast))
	if err != nil {
		t.Fatal(err)
	}
	n := sc.Topology.Node("rtsw1")
	if n == nil {
		t.Fatal("no rtsw1")
	}
	ideal, err := fabric.NodeConfig(n)
	if err != nil {
		t.Fatal(err)
	}
	var prev int64
	for _, scale := range []int{100000, 10000, 1000} {
		c := ideal
		var cerr error
		emulatedSwitches(scale, 1, nodeplan.LagBudget, &cerr)(n, &c)
		if cerr != nil {
			t.Fatal(cerr)
		}
		want, err := nodeplan.Switch(n, nil, scale, 1, "/x.sock", nodeplan.LagBudget)
		if err != nil {
			t.Fatal(err)
		}
		if c.PFC.Headroom != want.Switch.PFC.Headroom {
			t.Errorf("scale %d: headroom %d, want the emulated switch's %d", scale, c.PFC.Headroom, want.Switch.PFC.Headroom)
		}
		if c.PFC.Headroom <= ideal.PFC.Headroom || c.PFC.Headroom < prev {
			t.Errorf("scale %d: headroom %d, want more than the ideal switch's %d and at least %d (larger scale)",
				scale, c.PFC.Headroom, ideal.PFC.Headroom, prev)
		}
		prev = c.PFC.Headroom
	}
	// A lab on one loop: the profile's headroom, as the emulated switches
	// of such a lab run.
	c := ideal
	var cerr error
	emulatedSwitches(1000, 1, emulatedLab(sc, Options{NodeGroups: 1}).LagBudget(), &cerr)(n, &c)
	if cerr != nil || c.PFC.Headroom != ideal.PFC.Headroom {
		t.Errorf("one loop: headroom %d (%v), want the profile's %d", c.PFC.Headroom, cerr, ideal.PFC.Headroom)
	}
}

func TestEmuGrace(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(matchIncast))
	if err != nil {
		t.Fatal(err)
	}
	w := sc.Workloads[0]
	// host3:gpu0 takes 3 flows × 32 × 256 KB at 400 Gb/s.
	wantDrain := clock.Rate(400e9).Serialize(3 * PerfTxDepth * int(w.Size))
	if got := drainTime(w, w.Flows); got != wantDrain {
		t.Errorf("drain %v, want %v", got, wantDrain)
	}
	tests := []struct {
		scale int
		want  clock.Duration
	}{
		{10000, 2 * wantDrain},    // 1 s of wall clock is 100 µs
		{1000, clock.Millisecond}, // 1 s of wall clock is 1 ms
		{1e6, max(2*wantDrain, sc.Duration)},
	}
	for _, tc := range tests {
		if got := emuGrace(sc, w, w.Flows, tc.scale); got != tc.want {
			t.Errorf("scale %d: grace %v, want %v", tc.scale, got, tc.want)
		}
	}
	coll := &scenario.Workload{Kind: scenario.KindCollective}
	if got, want := emuGrace(sc, coll, nil, 10000), 3*clock.Millisecond; got != want {
		t.Errorf("collective at 10000: grace %v, want %v (30 s of wall clock)", got, want)
	}
}

// TestSimMatchEmulation runs the timed incast with and without
// MatchEmulation: without it the run stops at the scenario's duration with
// the queued messages still in flight and reports goodput within the
// window; with it the run goes on until they completed, and still
// reports goodput within the window, as the endpoint nodes do.
func TestSimMatchEmulation(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(matchIncast))
	if err != nil {
		t.Fatal(err)
	}
	ideal, err := Sim(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	match, err := Sim(context.Background(), sc, Options{MatchEmulation: true})
	if err != nil {
		t.Fatal(err)
	}
	if ideal.FabricTime != sc.Duration || ideal.Jobs[0].Done {
		t.Errorf("ideal: %v of fabric time, done %v; want the duration %v, not done", ideal.FabricTime, ideal.Jobs[0].Done, sc.Duration)
	}
	if match.FabricTime <= sc.Duration || !match.Jobs[0].Done {
		t.Errorf("matching: %v of fabric time, done %v; want past %v, done", match.FabricTime, match.Jobs[0].Done, sc.Duration)
	}
	for _, o := range []*Outcome{ideal, match} {
		if len(o.Problems) > 0 {
			t.Errorf("problems: %v", o.Problems)
		}
	}
	pj := match.Jobs[0]
	final := match.Snapshots[len(match.Snapshots)-1].Samples
	for i, f := range pj.Flows {
		got := 8 * telemetry.Sum(final, "flow_goodput_bytes_per_second", telemetry.Label{Name: "from", Value: f.From})
		if got != f.GoodputBps || got < 100e9 || got > 140e9 {
			t.Errorf("flow %d %s: goodput sample %.4g, report %.4g; want equal, a third of 400G", i, f.From, got, f.GoodputBps)
		}
		// Goodput within the window in both runs (their switches differ by
		// the headroom for loop stalls).
		if w := ideal.Jobs[0].Flows[i].GoodputBps; got < 0.95*w || got > 1.05*w {
			t.Errorf("flow %d: goodput %.4g matching the emulation, %.4g plain: want both within the window, within 5 %%", i, got, w)
		}
		// Every message completed: 32 queued at the end plus those of the
		// window, whole messages only.
		if f.Bytes%sc.Workloads[0].Size != 0 || f.Bytes <= ideal.Jobs[0].Flows[i].Bytes {
			t.Errorf("flow %d: %d bytes, want whole messages, more than the %d by the duration", i, f.Bytes, ideal.Jobs[0].Flows[i].Bytes)
		}
	}
	if telemetry.Sum(final, "switch_drop_packets_total") != 0 {
		t.Errorf("drops: %v", telemetry.Sum(final, "switch_drop_packets_total"))
	}
}
