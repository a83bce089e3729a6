package fidelity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

// The incast both drivers run. The scale is fixed, not auto: k = 8000
// dilates a 100G link to 12.5 Mb/s, so the 4:1 incast moves ~1,500 frames
// per wall second through the switch (read + write) and each endpoint
// sends or takes ~375 — a few per cent of one core, so the loops stay on
// time even on a loaded 2-core machine — and 1 ms of host scheduling
// jitter is 0.125 µs of fabric time, an eighth of a link's delay. The
// 3 ms of fabric time take 24 s of wall clock. Why not k = 4000:
// docs/performance.md, "Measurements from package docs", fidelity.
const (
	fidelityScale = 8000
	incastFor     = 3 * clock.Millisecond
	msgSize       = 64 << 10
	txDepth       = 32
	tolerance     = 0.15
	// laptopTolerance holds the laptop scenario files (TestLaptopScenarios-
	// RunDriversAgree) on goodput, XOFF time and busbw to issue 26's 5 %,
	// and laptopFramesTolerance their PFC frame counts to its 10 %,
	// emulated with exact links (frames carry their sender's lateness:
	// docs/design.md, "The dilated loop", "Trailers"). The runs behind
	// both bounds, and the earlier 20 % and 15 %, are in
	// docs/performance.md, "Measurements from package docs", fidelity.
	// The 4:1 incast above runs without exact links.
	laptopTolerance       = 0.05
	laptopFramesTolerance = 0.10
)

// TestIncastEmulationMatchesSimulator is issue 5's must-show 4: a 4:1
// incast with PFC, run in emulation and in the simulator from the same
// topology file, gives per-flow throughput and PFC frame counts within
// 15 % of each other.
func TestIncastEmulationMatchesSimulator(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	topo, err := topologies.Load(filepath.Join("testdata", "incast4.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	senders := []string{"sender1:gpu0", "sender2:gpu0", "sender3:gpu0", "sender4:gpu0"}
	const receiver = "receiver:gpu0"

	emu, emuPauses, lag := runEmulation(t, topo, senders, receiver)
	sim, simPauses := runSimulation(t, topo, senders, receiver)

	lines, bad := Compare(emu, sim, tolerance)
	out := t.Output()
	fmt.Fprintf(out, "4:1 incast, %v of fabric time, %d KiB writes, tx depth %d, scale %d (emulation) vs simulator:\n",
		incastFor, msgSize>>10, txDepth, fidelityScale)
	for _, l := range lines {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, l := range pauseLines(emuPauses, simPauses) {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, l := range lag {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, l := range bad {
		t.Errorf("out of %.0f%%: %s", 100*tolerance, l)
	}
}

// runEmulation deploys topo, runs the incast with one RunPerf per sender
// and returns the senders' goodput and the PFC frames the switch sent
// during it, what each switch port did with PFC, and lines describing the
// nodes' loop lag.
func runEmulation(t *testing.T, topo *topologies.Topology, senders []string, receiver string) (Numbers, map[string]pgPause, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	root := runRoot(t)
	name := fmt.Sprintf("fid%05x", os.Getpid()&0xfffff)
	lab, err := deploy.Deploy(ctx, deploy.Options{Topology: topo, LabName: name, Root: root, Binary: binary(t), Scale: fidelityScale, Seed: 1})
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	t.Cleanup(func() {
		if _, err := deploy.Destroy(context.Background(), root, lab.Name); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	refs := map[string]jobs.NICRef{}
	var switches []*nodeapi.Client
	var all []*nodeapi.Client
	for _, n := range lab.Nodes {
		if n.Socket == "" {
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		t.Cleanup(func() { c.Close() })
		all = append(all, c)
		switch n.Kind {
		case topologies.KindHost:
			refs[n.Name+":gpu0"] = jobs.NICRef{Node: n.Name, NIC: n.Name + ":gpu0", Client: c}
		case topologies.KindSwitch:
			switches = append(switches, c)
		}
	}
	gather := func(cs []*nodeapi.Client) []telemetry.Sample {
		var s []telemetry.Sample
		for _, c := range cs {
			got, err := c.Telemetry(ctx)
			if err != nil {
				t.Fatalf("telemetry: %v", err)
			}
			s = append(s, got...)
		}
		return s
	}
	before := gather(switches)
	res := Numbers{PerFlowGbps: map[string]float64{}}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for _, s := range senders {
		wg.Go(func() {
			rep, err := jobs.RunPerf(ctx, refs[s], refs[receiver], jobs.PerfSpec{Op: "write", Size: msgSize, Duration: incastFor, QPs: 1, TxDepth: txDepth}, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s, err))
				return
			}
			if rep.WrongBytes != 0 {
				errs = append(errs, fmt.Errorf("%s: %d wrong bytes", s, rep.WrongBytes))
			}
			res.PerFlowGbps[s] = rep.Client.BWAvg
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("incast: %v", err)
	}
	after := gather(switches)
	delta := func(name string) float64 { return telemetry.Sum(after, name) - telemetry.Sum(before, name) }
	res.PauseFrames = delta("switch_port_pfc_tx_frames_total")
	res.XOffSeconds = delta("switch_pg_xoff_seconds_total")
	if late := delta("emu_rx_sender_late_seconds_total"); late != 0 {
		t.Errorf("emulation: frames carried their sender's lateness (%v s) in a lab deployed without exact links", late)
	}
	// Drops are reported, not failed on: a loop that stalls for tens of
	// ms (a loaded machine) overruns the 100G headroom in fabric time (see
	// docs/design.md, "The dilated loop", "Late turns"); go-back-N then costs throughput, which the
	// comparison does catch.
	lines := lagLines(gather(all))
	lines = append(lines, fmt.Sprintf("emulation: the switch dropped %v packets", delta("switch_drop_packets_total")))
	return res, pauses(topo, after, before), lines
}

// lagLines describes each node's loop lag and how far in the past it
// delivered received frames (fabric time).
func lagLines(samples []telemetry.Sample) []string {
	type row struct{ p99, max, age float64 }
	rows := map[string]*row{}
	for _, s := range samples {
		n := s.Label("node")
		r := rows[n]
		if r == nil {
			r = &row{}
			rows[n] = r
		}
		switch {
		case s.Name == "emu_batch_lag_seconds" && s.Label("clock") == "wall" && s.Label("quantile") == "0.99":
			r.p99 = s.Value
		case s.Name == "emu_batch_lag_seconds" && s.Label("clock") == "wall" && s.Label("quantile") == "1":
			r.max = s.Value
		case s.Name == "emu_rx_replay_age_seconds" && s.Label("stat") == "max":
			r.age = s.Value
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		r := rows[n]
		out = append(out, fmt.Sprintf("lag %-9s wall p99 %7.3f ms  max %7.3f ms; oldest frame delivered %v in the past (fabric)",
			n, r.p99*1e3, r.max*1e3, clock.Duration(r.age*float64(clock.Second))))
	}
	return out
}

// runSimulation runs the same incast in the simulator, and returns what
// each switch port did with PFC too.
func runSimulation(t *testing.T, topo *topologies.Topology, senders []string, receiver string) (Numbers, map[string]pgPause) {
	t.Helper()
	// The same switch configuration the emulated switch processes run,
	// including the headroom the emulation adds for loop stalls
	// (lab/emulation/node's lag allowance): the comparison is of the drivers, not
	// of two configurations.
	configure := func(n *topologies.Node, c *switchmodel.Config) {
		cfg, err := nodeplan.Switch(n, nil, fidelityScale, 1, "/unused.sock", nodeplan.LagBudget)
		if err != nil {
			t.Fatalf("switch config of %s: %v", n.Name, err)
		}
		c.PFC.Headroom = cfg.Switch.PFC.Headroom
	}
	lab, err := simlab.Build(topo, simlab.Options{Seed: 1, Fabric: fabric.SimOptions{Configure: configure}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := lab.Incast(receiver, simlab.PerfSpec{Name: "incast", From: senders,
		Op: "write", Size: msgSize, Duration: incastFor, QPs: 1, TxDepth: txDepth})
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.RunUntilIdle(100 * incastFor); err != nil || job.Err() != nil {
		t.Fatal(err, job.Err())
	}
	res := Numbers{PerFlowGbps: map[string]float64{}}
	for _, f := range job.Results() {
		// A timed job's: what arrived within its window, over the
		// window (the endpoint node's perf job counts what completed
		// within it, as perftest -D).
		res.PerFlowGbps[f.From] += f.GoodputGbps
	}
	rep := lab.IncastReport(job)
	res.PauseFrames = float64(rep.PauseFrames)
	res.XOffSeconds = rep.PauseTime.Seconds()
	if rep.Drops != 0 {
		t.Errorf("simulator: %d drops", rep.Drops)
	}
	return res, pauses(topo, lab.Samples(), nil)
}

// binary is the rocelab command the lab's node processes run.
func binary(t *testing.T) string { return testenv.BuildRocelab(t) }

// runRoot is a fresh run-directory root.
func runRoot(t *testing.T) string { return testenv.RunRoot(t, "rltest-") }
