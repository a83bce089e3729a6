package fidelity

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/run"
)

// TestLaptopScenariosRunDriversAgree is issue 7's fidelity requirement
// through lab/scenarios/run, as `rocelab run --exact-links FILE` and
// `rocelab run --sim --match-emulation FILE` run the laptop scenario
// files: run.Emulate (deploy, workloads on the endpoint processes,
// destroy) with EmuOptions.ExactLinks (frames carry their sender's
// lateness; the test fails if none did) and run.Sim with
// Options.MatchEmulation give per-flow goodput, time in XOFF and
// collective busbw and time within 5 % of each other (PFC frame counts
// within 10 %, see laptopFramesTolerance), every emulated flow has
// goodput, and neither run reports a problem. Each file runs twice: with
// a process per node (links through their veths), and with the nodes in
// one group (`rocelab run --node-groups 1`: links in memory, emu
// "Links inside a loop"; the test fails if no frame came that way).
func TestLaptopScenariosRunDriversAgree(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin, root := binary(t), runRoot(t)
	for i, s := range laptopScenarios {
		for _, groups := range []int{0, 1} {
			name := s.file + map[int]string{0: "", 1: "/one-group"}[groups]
			t.Run(name, func(t *testing.T) {
				runDriversAgree(t, bin, root, s.file, fmt.Sprintf("fr%d%d-%05x", i, groups, os.Getpid()&0xfffff), groups)
			})
		}
	}
}

// runDriversAgree is TestLaptopScenariosRunDriversAgree for one file,
// its lab's nodes in that many groups (0: a process each).
func runDriversAgree(t *testing.T, bin, root, file, lab string, groups int) {
	sc, _ := loadLaptop(t, file)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	// A lab that fell behind its clock (a busy machine) runs again at a
	// larger k; the simulator then matches that k.
	rescaled := 0
	emuOut, err := run.EmulateKeepingUp(ctx, sc, run.EmuOptions{Options: run.Options{NodeGroups: groups}, Binary: bin, Root: root,
		LabName: lab, ExactLinks: true}, 3, func(from, to int) {
		t.Logf("the lab fell behind at k = %d: running again at k = %d", from, to)
		rescaled = to
	})
	if err != nil {
		t.Fatalf("emulation: %v", err)
	}
	if emuOut.Behind != nil && emuOut.Behind.Behind {
		t.Fatalf("emulation still behind after three reruns: %v", emuOut.Behind)
	}
	simOut, err := run.Sim(ctx, sc, run.Options{MatchEmulation: true, NodeGroups: groups, Scale: rescaled})
	if err != nil {
		t.Fatalf("simulation: %v", err)
	}
	emu, sim := outcomeNumbers(emuOut), outcomeNumbers(simOut)
	final := emuOut.Snapshots[len(emuOut.Snapshots)-1].Samples
	if n := telemetry.Sum(final, "emu_rx_trailer_frames_total"); groups == 0 && n <= 0 {
		t.Errorf("emulation: no frame carried its sender's lateness (emu_rx_trailer_frames_total %v): exact links did not reach the nodes", n)
	}
	if n := telemetry.Sum(final, "emu_rx_inloop_frames_total"); groups == 1 && n <= 0 {
		t.Errorf("emulation in one group: no frame came over a link in memory (emu_rx_inloop_frames_total %v)", n)
	}
	lines, bad := CompareFrames(emu.Numbers, sim.Numbers, laptopTolerance, laptopFramesTolerance)
	out := t.Output()
	fmt.Fprintf(out, "%s: rocelab run (scale %d, %v of fabric time in %v) vs run --sim --match-emulation (%v):\n",
		sc.Name, sc.Scale.Factor, emuOut.FabricTime, emuOut.Wall.Round(time.Millisecond), simOut.FabricTime)
	for _, l := range lines {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, l := range pauseLines(emu.pauses, sim.pauses) {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, l := range linkLines(emu.links, sim.links) {
		fmt.Fprintf(out, "  %s\n", l)
	}
	fmt.Fprintf(out, "  emulation: the switches dropped %v packets\n", emu.drops)
	for _, l := range bad {
		t.Errorf("out of tolerance (%.0f%%, PFC frames %.0f%%): %s", 100*laptopTolerance, 100*laptopFramesTolerance, l)
	}
	if len(bad) > 0 {
		// Late node loops explain most misses.
		for _, l := range lagLines(emuOut.Snapshots[len(emuOut.Snapshots)-1].Samples) {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	for name, o := range map[string]*run.Outcome{"emulation": emuOut, "simulation": simOut} {
		for _, p := range o.Problems {
			t.Errorf("%s: problem: %s", name, p)
		}
		for _, r := range o.Results {
			fmt.Fprintf(out, "  %s: %v %s: %s\n", name, r.Pass, r.Expectation, r.Message)
		}
	}
	for k, v := range emu.PerFlowGbps {
		if v <= 0 {
			t.Errorf("emulation: flow %s has no goodput", k)
		}
	}
	if sim.drops != 0 {
		t.Errorf("simulator: %v drops", sim.drops)
	}
}

// outcomeNumbers reads what a lab/scenarios/run run measured from its final
// snapshot: the perf flows' goodput (flow_goodput_bytes_per_second), a collective's
// busbw and time per size, the switches' PFC frames, XOFF time and drops,
// and the bytes on the inter-switch links.
func outcomeNumbers(o *run.Outcome) simRun {
	final := o.Snapshots[len(o.Snapshots)-1].Samples
	res := simRun{Numbers: Numbers{PerFlowGbps: map[string]float64{}, Figures: map[string]float64{}}}
	for _, s := range final {
		switch s.Name {
		case "flow_goodput_bytes_per_second":
			res.PerFlowGbps[flowKey(s.Label("from"), s.Label("to"))] = s.Value * 8 / 1e9
		case "collective_busbw_bytes_per_second", "collective_time_seconds":
			size, _ := strconv.ParseInt(s.Label("size"), 10, 64)
			name := s.Label("job") + " " + strconv.FormatInt(size>>10, 10) + "KiB"
			if s.Name == "collective_busbw_bytes_per_second" {
				res.Figures[name+" busbw Gb/s"] = s.Value * 8 / 1e9
			} else {
				res.Figures[name+" time us"] = s.Value * 1e6
			}
		}
	}
	res.PauseFrames = telemetry.Sum(final, "switch_port_pfc_tx_frames_total")
	res.XOffSeconds = telemetry.Sum(final, "switch_pg_xoff_seconds_total")
	res.drops = telemetry.Sum(final, "switch_drop_packets_total")
	topo := o.Scenario.Topology
	res.links = linkBytes(topo, final, nil)
	res.pauses = pauses(topo, final, nil)
	return res
}
