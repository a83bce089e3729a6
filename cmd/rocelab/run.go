package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/core/units"
	"github.com/rocelab/rocelab/internal/hugepage"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	labrun "github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// runFlags are the flags of rocelab run.
type runFlags struct {
	sim    bool
	junit  string
	report string
	seed   uint64
	quiet  bool
	// match: --sim runs as the emulation does (labrun.Options.MatchEmulation).
	match bool
	// flow: --sim runs the flow-level mode (labrun.Options.Flow).
	flow bool
	// Emulation, and --sim with --match-emulation.
	scale int
	// --sim only: goroutines the simulator runs the fabric on.
	workers int
	// Emulation only.
	name, root string
	nodeGroups int
	exactLinks bool
	// retryBehind: rerun an emulated run that fell behind at a larger k.
	retryBehind bool
	socketLinks bool
	// --chakra: a scenario of one chakra workload from flags.
	chakra         scenario.ChakraRun
	chakraDuration string
	// cpuProfile: write a CPU profile of the whole command here.
	cpuProfile string
	// aggregate: auto, on or off (run.Options.Aggregate).
	aggregate string
}

func newRunCmd(opts *options) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE | run --chakra DIR",
		Short: "Run a scenario and check its expectations (exit 0 all hold, 1 some fail, 2 bad file)",
		Long: `run runs a scenario file — a topology, workloads, a fault schedule and
expectations (see docs/scenarios.md) — and prints each expectation with
PASS or FAIL and the value measured. With --sim it runs in the
discrete-event simulator: deterministic for a seed, no root needed.
Without --sim it runs in the emulation lab (needs root): it deploys the
scenario's topology as a lab, runs the workloads on the endpoint
processes at their (dilated) start times, applies the fault schedule
through the nodes' fault API, scrapes telemetry, evaluates, writes the
report and destroys the lab again — also on failure or Ctrl-C. Front-end
(fe) workloads run only with --sim so far.

The emulated lab runs in one process (--node-groups 1, as rocelab demo):
its models share one event loop and the links between them carry frames
in memory, exact in fabric time however late the loop runs, so the
switches need no allowance for host stalls and run the profile's
configuration — the simulator's — and scale: auto picks a small k (100
for the examples, 199 for the laptop). --node-groups 0 runs a process per
node, as rocelab deploy does: its switches size their PFC headroom for
loop stalls, and auto picks k ≥ 1,000.

--sim --match-emulation runs the simulator as the emulation runs: its
switches get the configuration the emulated switch processes have at the
scale (--scale, else the scenario's, else auto) for the lab's shape
(--node-groups, --socket-links: with a process per node, PFC headroom
grown for host stalls) and the run goes on until every workload finished
— so that its numbers compare with those of the same file run without
--sim (the lab's fidelity check). Without it, --sim runs the ideal
switches of the topology. Both clocks measure a timed perf job's goodput
within its window (as perftest -D) and its messages' completion times.

--sim runs the fabric on one goroutine per CPU (--workers N: on N), cut
by zone, with the same results as one (docs/design.md); a topology of
fewer than two zones runs on one, and so does a scenario with an
all-to-all of more than 128 ranks (--workers is refused for it).

--sim --flow runs the flow-level mode instead of packets: each flow (a
perf QP, each of its MetaRoCE paths, a collective's writes) takes the path
the packet simulator's switches route it on, at its max-min fair share of
the link capacities, recomputed as flows start and end — answers in
seconds for sweeps. Queues, PFC, ECN and drops are not modelled:
expectations on them fail as "not measured in flow mode"; faults,
background, fe and chakra workloads and perf reads are refused. A
hier-allreduce alone in its scenario whose rings are too long for the
collective engine (more than 10 million writes, or 2,048 ranks: seed-24k)
is timed by a ring recurrence at its QPs' max-min rates. Its error
against the packet mode is in docs/performance.md ("Flow-level mode").

--chakra DIR runs MLCommons Chakra execution traces (DIR/PREFIX.RANK.et,
one file per rank) as one training step — a scenario of one chakra
workload (docs/scenarios.md) on --topology (default laptop), its ranks on
the first back-end NICs or --ranks, for a duration three times what the
step takes on an ideal fabric unless --duration says. The report gives the
step time, each rank's compute, communication and exposed communication,
and the timeline.

Exit status: 0 when every expectation holds, 1 when one does not (or a job
failed), 2 when the file does not validate.`,
		Example: `  rocelab run --sim examples/01-incast-hol/scenario.yaml --report out/
  rocelab run --sim examples/04-ecmp/spray.yaml --junit results.xml
  rocelab run examples/01-incast-hol/scenario.yaml
  rocelab run --sim --match-emulation examples/01-incast-hol/scenario.yaml
  rocelab run --sim --flow examples/08-scale-permutation/scenario.yaml
  rocelab run --sim --chakra examples/09-chakra/microbenchmarks/all_reduce/8npus_1MB --report out/
  rocelab run --sim --chakra examples/09-chakra/transformer/ai-zone-64 --topology ai-zone-64 --peak-tflops 312`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("chakra") && len(args) > 0 {
				return badInput(fmt.Errorf("run takes a scenario FILE or --chakra DIR, not both (got %s)", strings.Join(args, " ")))
			}
			if cmd.Flags().Changed("chakra") {
				return nil
			}
			if len(args) != 1 {
				return badInput(fmt.Errorf("run takes a scenario FILE, or --chakra DIR (got %d arguments)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.cpuProfile != "" {
				stop, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if cmd.Flags().Changed("chakra") {
				return runChakra(cmd, opts, f, cmd.Flags().Changed("seed"))
			}
			for _, fl := range chakraOnlyFlags {
				if cmd.Flags().Changed(fl) {
					return badInput(fmt.Errorf("--%s goes with --chakra", fl))
				}
			}
			return runScenario(cmd, opts, args[0], f, cmd.Flags().Changed("seed"))
		},
	}
	cmd.Flags().BoolVar(&f.sim, "sim", false, "run in the discrete-event simulator")
	cmd.Flags().StringVar(&f.junit, "junit", "", "write a JUnit XML report of the expectations to this file")
	cmd.Flags().StringVar(&f.report, "report", "", "write the report (summary.md, metrics, plots) into this directory")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "override the scenario's seed")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr")
	cmd.Flags().BoolVar(&f.retryBehind, "retry-behind", false, fmt.Sprintf("emulation: when the lab falls behind its dilated clock, run again at twice the k (up to %d times)", maxBehindRetries))
	cmd.Flags().StringVar(&f.name, "name", "", "emulation: lab name (default: the scenario's name and the pid)")
	cmd.Flags().BoolVar(&f.flow, "flow", false, "with --sim: the flow-level mode (flows as max-min fair rates over the same paths; no queues, PFC or ECN)")
	cmd.Flags().BoolVar(&f.match, "match-emulation", false, "with --sim: run as the emulation does (its switches' configuration at the scale for the lab's shape, until every workload finished)")
	cmd.Flags().IntVar(&f.nodeGroups, "node-groups", 1, "emulation, or --sim --match-emulation: run the lab's nodes in this many processes, each group's models on one loop, links inside a group in memory (0: a process per node, as deploy does by default)")
	cmd.Flags().BoolVar(&f.socketLinks, "socket-links", false, "emulation, or --sim --match-emulation: links between two nodes of one group carry their frames through their veths, not in memory (see deploy)")
	cmd.Flags().BoolVar(&f.exactLinks, "exact-links", true, "emulation: frames between nodes carry their sender's lateness, so each link's delay is exact and the node loops may run ahead (see deploy; --exact-links=false turns it off)")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "with --sim: run the fabric on this many goroutines, cut by zone (same results; topologies of two zones or more; default: the CPUs, one for a scenario with an all-to-all of more than 128 ranks)")
	cmd.Flags().IntVar(&f.scale, "scale", 0, "emulation, or --sim --match-emulation: scale factor k (default: the scenario's scale, or auto)")
	cmd.Flags().StringVar(&f.chakra.Dir, "chakra", "", "run the Chakra execution traces in this folder (PREFIX.RANK.et) instead of a scenario file")
	cmd.Flags().StringVar(&f.chakra.Prefix, "prefix", "", "with --chakra: the traces' PREFIX, when the folder holds several")
	cmd.Flags().StringVar(&f.chakra.Topology, "topology", "", "with --chakra: a built-in topology or a file (default laptop)")
	cmd.Flags().StringVar(&f.chakra.Ranks, "ranks", "", `with --chakra: the NIC of each rank, in rank order (e.g. "host[1-4]:gpu[0-1]"; default the first back-end NICs)`)
	cmd.Flags().IntVar(&f.chakra.Iters, "iters", 1, "with --chakra: steps to run, back to back")
	cmd.Flags().Float64Var(&f.chakra.PeakTFLOPS, "peak-tflops", 0, "with --chakra: time compute nodes by a roofline of this peak (ASTRA-sim's peak-perf) from their num_ops, not by duration_micros")
	cmd.Flags().Float64Var(&f.chakra.MemGBps, "mem-gbps", 0, "with --chakra and --peak-tflops: the roofline's memory bandwidth in GB/s (ASTRA-sim's local-mem-bw)")
	cmd.Flags().StringVar(&f.chakraDuration, "duration", "", "with --chakra: fabric time the run lasts (default: three times the step on an ideal fabric, at least 1ms)")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	cmd.Flags().StringVar(&f.aggregate, "aggregate", "auto", fmt.Sprintf("with --sim: telemetry per switch, tier and job instead of per queue, port and flow, and the report's distribution and heat-map plots: auto (above %d switch ports), on or off", simlab.LargeFabricPorts))
	limit(cmd.Flags(), "iters", 1, 1_000_000)
	limit(cmd.Flags(), "peak-tflops", 0, unbounded)
	limit(cmd.Flags(), "mem-gbps", 0, unbounded)
	limit(cmd.Flags(), "node-groups", 0, 65535)
	limit(cmd.Flags(), "workers", 0, 1024)
	limit(cmd.Flags(), "scale", 1, maxScale)
	limit(cmd.Flags(), "seed", 0, unbounded)
	addRootFlag(cmd, &f.root)
	return cmd
}

// chakraOnlyFlags go with --chakra only.
var chakraOnlyFlags = []string{"prefix", "topology", "ranks", "iters", "peak-tflops", "mem-gbps", "duration"}

// runChakra runs the scenario --chakra and its flags stand for.
func runChakra(cmd *cobra.Command, opts *options, f runFlags, seedSet bool) error {
	if f.chakraDuration != "" {
		d, err := units.ParseDuration(f.chakraDuration)
		if err != nil || d <= 0 {
			return badInput(fmt.Errorf("--duration %q: want a fabric time above 0, like 2ms", f.chakraDuration))
		}
		f.chakra.Duration = d
	}
	if f.chakra.MemGBps > 0 && f.chakra.PeakTFLOPS == 0 {
		return badInput(errors.New("--mem-gbps goes with --peak-tflops (the roofline's peak)"))
	}
	sc, err := scenario.ChakraScenario(f.chakra)
	if err == nil {
		err = checkRun(cmd, sc, "--chakra "+f.chakra.Dir, &f)
	}
	if err != nil {
		return invalidScenario(f.junit, sc0(sc, f.chakra.Dir), err)
	}
	fmt.Fprintf(opts.stderr, "# %s: %d ranks on %s, %v of fabric time\n", f.chakra.Dir, len(sc.Workloads[0].Ranks), sc.Topology.Name, sc.Duration)
	return runChecked(cmd, opts, sc, f, seedSet)
}

// sc0 names a scenario for an error's report: its source, else dir.
func sc0(sc *scenario.Scenario, dir string) string {
	if sc != nil {
		return sc.Source
	}
	return dir
}

// errFailed is returned when the run completed and an expectation failed.
var errFailed = errors.New("expectations failed")

// errBehind is returned when an emulated run's lab fell behind its
// dilated clock: its results are not the fabric's (exit exitBehind).
var errBehind = errors.New("no verdict")

// exitBehind is the exit code of a run whose lab fell behind: neither a
// pass (0) nor a failure of the fabric (1).
const exitBehind = 3

// maxBehindRetries bounds --retry-behind's reruns (k doubles each time).
const maxBehindRetries = 4

func behind(out *labrun.Outcome) bool { return out != nil && out.Behind != nil && out.Behind.Behind }

// runScenario loads, checks and runs file. A file that does not load or
// cannot run as asked exits 2, and with --junit still leaves a report that
// names why.
func runScenario(cmd *cobra.Command, opts *options, file string, f runFlags, seedSet bool) error {
	sc, err := scenario.Load(file)
	if err == nil {
		err = checkRun(cmd, sc, file, &f)
	}
	if err != nil {
		return invalidScenario(f.junit, file, err)
	}
	return runChecked(cmd, opts, sc, f, seedSet)
}

// invalidScenario is err as bad input, after writing the JUnit report of
// the invalid file when one was asked for.
func invalidScenario(junit, file string, err error) error {
	if junit == "" {
		return badInput(err)
	}
	if jerr := writeJUnitFile(junit, func(w io.Writer) error {
		return scenario.WriteJUnitInvalid(w, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), file, err)
	}); jerr != nil {
		return badInput(fmt.Errorf("%w (and the JUnit report: %v)", err, jerr))
	}
	return badInput(err)
}

// writeJUnitFile creates path (and its directory) and writes it with write.
func writeJUnitFile(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	jf, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	err = write(jf)
	if cerr := jf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}

// checkRun refuses flags that do not go together and a scenario this run
// cannot run; it settles f.workers.
func checkRun(cmd *cobra.Command, sc *scenario.Scenario, file string, f *runFlags) error {
	if f.match && !f.sim {
		return errors.New("--match-emulation goes with --sim (it makes the simulator run as the emulation does)")
	}
	if f.flow && !f.sim {
		return errors.New("--flow goes with --sim (the flow-level mode is a simulator)")
	}
	if f.flow && f.match {
		return errors.New("--flow and --match-emulation do not go together (the flow-level mode has no switch queues to match)")
	}
	if f.flow {
		if err := labrun.CheckFlow(sc); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if f.sim && !f.match && (cmd.Flags().Changed("node-groups") || cmd.Flags().Changed("socket-links")) {
		return errors.New("--node-groups and --socket-links shape the emulated lab: with --sim they go with --match-emulation (which then plans its switches and scale as that lab's)")
	}
	if f.nodeGroups < 0 {
		return fmt.Errorf("--node-groups %d: want 0 (a process per node) or more", f.nodeGroups)
	}
	if cmd.Flags().Changed("aggregate") {
		if !f.sim {
			return errors.New("--aggregate goes with --sim (the emulation reads its nodes' telemetry as it is)")
		}
		if _, err := aggregation(f.aggregate); err != nil {
			return err
		}
	}
	if cmd.Flags().Changed("workers") {
		if !f.sim {
			return errors.New("--workers goes with --sim (the emulation runs on its nodes' loops)")
		}
		if f.workers < 1 {
			return fmt.Errorf("--workers %d: want 1 or more", f.workers)
		}
		if err := labrun.CheckWorkers(sc, f.workers); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	} else {
		f.workers = labrun.AutoWorkers(sc, runtime.NumCPU())
	}
	if !f.sim {
		for _, w := range sc.Workloads {
			if w.Kind == scenario.KindFE {
				return fmt.Errorf("%s: workload %s: kind fe is not supported in emulation yet: run it with --sim", file, w.Name)
			}
			if w.Hierarchical {
				return fmt.Errorf("%s: workload %s: op hier-allreduce is not supported in emulation yet: run it with --sim", file, w.Name)
			}
		}
	}
	return nil
}

// runChecked runs a scenario checkRun accepted.
func runChecked(cmd *cobra.Command, opts *options, sc *scenario.Scenario, f runFlags, seedSet bool) error {
	var err error
	agg, _ := aggregation(f.aggregate) // checkRun refused a bad value
	ro := labrun.Options{Seed: f.seed, SeedSet: seedSet, ReportDir: f.report, Scale: f.scale, MatchEmulation: f.match, Workers: f.workers, Flow: f.flow,
		NodeGroups: f.nodeGroups, SocketLinks: f.socketLinks, Aggregate: agg}
	var out *labrun.Outcome
	if f.sim {
		tty := isTerminal(opts.stderr)
		if !f.quiet {
			ro.Progress = progressPrinter(opts.stderr, tty)
		}
		stopHuge := followHugePages(opts, simlab.HeapReserve(sc.Topology))
		out, err = labrun.Sim(cmd.Context(), sc, ro)
		stopHuge()
		if !f.quiet && tty {
			fmt.Fprint(opts.stderr, "\r\033[K")
		}
	} else {
		if err := requireRoot("run (without --sim)"); err != nil {
			return err
		}
		eo := labrun.EmuOptions{Options: ro, LabName: f.name, Root: f.root, ExactLinks: f.exactLinks}
		if !f.quiet {
			eo.Log = opts.stderr
		}
		retries := 0
		if f.retryBehind {
			retries = maxBehindRetries
		}
		out, err = labrun.EmulateKeepingUp(cmd.Context(), sc, eo, retries, func(from, to int) {
			fmt.Fprintf(opts.stderr, "# the lab fell behind at k = %d: running again at k = %d (--retry-behind)\n", from, to)
		})
	}
	if err != nil && out == nil {
		return err
	}
	if f.junit != "" {
		if err := writeJUnitFile(f.junit, func(w io.Writer) error {
			return scenario.WriteJUnitWith(w, sc.Name, out.Results, scenario.JUnitOptions{File: sc.Source, Elapsed: out.Wall, Behind: out.Verdict.Behind})
		}); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if opts.wantJSON() {
		if err := opts.printJSON(runJSON(out)); err != nil {
			return err
		}
	} else {
		printOutcome(opts.stdout, out)
	}
	if behind(out) {
		return &exitError{code: exitBehind, err: fmt.Errorf("%s: %w: %v", sc.Name, errBehind, out.Behind)}
	}
	if !out.Pass {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", sc.Name, errFailed)}
	}
	return nil
}

// quietLog is the longest a log (not a terminal) goes without a progress
// line: a run on a large fabric can take minutes for a tenth of itself.
const quietLog = 30 * time.Second

// progressPrinter writes fabric time / duration and events/s to w, at
// most every 200 ms: redrawn on one line of a terminal; elsewhere (a CI
// log, a pipe) a line each time another tenth of the run is done, or
// quietLog passed since the last, with no control characters.
func progressPrinter(w io.Writer, tty bool) func(labrun.Progress) {
	var last time.Duration
	var lastEvents uint64
	lastTenth := 0
	return func(p labrun.Progress) {
		if p.Wall-last < 200*time.Millisecond {
			return
		}
		frac := p.Now.Seconds() / p.Duration.Seconds()
		tenth := int(10 * frac)
		if !tty && tenth <= lastTenth && p.Wall-last < quietLog {
			return
		}
		rate := float64(p.Events-lastEvents) / (p.Wall - last).Seconds()
		last, lastEvents = p.Wall, p.Events
		line := fmt.Sprintf("fabric time %v / %v (%.0f%%), %.2fM events/s", p.Now, p.Duration, 100*frac, rate/1e6)
		if tty {
			fmt.Fprint(w, "\r\033[K"+line)
			return
		}
		lastTenth = max(lastTenth, tenth)
		fmt.Fprintln(w, "# "+line)
	}
}

func printOutcome(w io.Writer, out *labrun.Outcome) {
	sc := out.Scenario
	fmt.Fprintf(w, "scenario %s (topology %s, seed %d): %v of fabric time in %v, %d events\n",
		sc.Name, sc.Topology.Name, out.Seed, out.FabricTime, out.Wall.Round(time.Millisecond), out.Events)
	if out.Mode == labrun.ModeFlow {
		fmt.Fprintf(w, "  mode: %s\n", out.Mode)
	}
	for _, r := range out.Results {
		mark := "PASS"
		if !r.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s\n        %s\n", mark, r.Expectation, r.Message)
	}
	for _, j := range out.Jobs {
		printChakra(w, j)
	}
	for _, p := range out.Problems {
		fmt.Fprintf(w, "  PROBLEM  %s\n", p)
	}
	passed := 0
	for _, r := range out.Results {
		if r.Pass {
			passed++
		}
	}
	verdict := "PASS"
	if !out.Pass {
		verdict = "FAIL"
	}
	if behind(out) {
		verdict = "BEHIND (no verdict: the lab fell " + out.Behind.String() + ")"
	}
	fmt.Fprintf(w, "%s: %d of %d expectations hold", verdict, passed, len(out.Results))
	if out.Report != "" {
		fmt.Fprintf(w, "; report in %s", out.Report)
	}
	fmt.Fprintln(w)
}

// printChakra prints a chakra job's steps: the step time and, over the
// ranks, the most exposed communication and the compute.
func printChakra(w io.Writer, j report.Job) {
	if j.Chakra == nil {
		return
	}
	for i, st := range j.Chakra.Steps {
		var worst chakra.RankResult
		for _, r := range st.Ranks {
			if r.Exposed >= worst.Exposed {
				worst = r
			}
		}
		fmt.Fprintf(w, "  STEP  %s %d: %v (%d ranks); most exposed communication %v on rank %d (%s), beside %v of compute\n",
			j.Name, i, st.Iteration, len(st.Ranks), worst.Exposed, worst.Rank, j.Chakra.NICs[worst.Rank], worst.Compute)
	}
}

type runResultJSON struct {
	Expectation string `json:"expectation"`
	Line        int    `json:"line"`
	Pass        bool   `json:"pass"`
	Measured    string `json:"measured"`
	Message     string `json:"message"`
	Error       string `json:"error,omitempty"`
}

func runJSON(out *labrun.Outcome) any {
	var res []runResultJSON
	for _, r := range out.Results {
		j := runResultJSON{Expectation: r.Expectation, Line: r.Pos.Line, Pass: r.Pass, Measured: r.Left.String(), Message: r.Message}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		res = append(res, j)
	}
	return map[string]any{
		"scenario": out.Scenario.Name, "seed": out.Seed, "pass": out.Pass,
		"fabric_time_s": out.FabricTime.Seconds(), "wall_s": out.Wall.Seconds(), "events": out.Events,
		"results": res, "problems": out.Problems, "jobs": out.Jobs, "report": out.Report, "behind": out.Behind,
	}
}

// followHugePages backs the heap with transparent huge pages from the
// lab's build to the run's end (internal/hugepage), with reserve bytes of
// heap mapped ahead: a large simulation touches its state in no particular
// order and spends much of its time in TLB misses otherwise. Call the
// returned stop when the run is over.
func followHugePages(opts *options, reserve int64) (stop func()) {
	f, err := hugepage.Follow(hugepage.DefaultPeriod, reserve)
	if err != nil {
		opts.log.Debug("huge pages not used", "err", err)
		return func() {}
	}
	return func() {
		r := f.Stop()
		opts.log.Debug("huge pages", "advised", r.Bytes, "huge", r.Huge)
	}
}

// startCPUProfile writes a CPU profile of what follows into path until
// the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}

// aggregation parses --aggregate.
func aggregation(s string) (labrun.Aggregation, error) {
	switch s {
	case "auto", "":
		return labrun.AggregateAuto, nil
	case "on":
		return labrun.AggregateOn, nil
	case "off":
		return labrun.AggregateOff, nil
	}
	return 0, fmt.Errorf("--aggregate %q: want auto, on or off", s)
}
