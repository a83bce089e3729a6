package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// Verdict is what a run of a scenario concluded, and what it cost.
type Verdict struct {
	Scenario *scenario.Scenario
	// Seed the run used.
	Seed uint64
	// Results of every expectation, in file order; Pass is whether all
	// held (and the run met no problem).
	Results []scenario.Result
	Pass    bool
	// Behind, if set, says the emulated lab fell behind its dilated clock
	// (a sentence): the results are reported, but not as the fabric's.
	Behind string
	// Mode names what produced the run ("packet-level simulator",
	// "flow-level mode", "emulation"); the summary says it.
	Mode string
	// FabricTime simulated, Wall time it took, Events run (the
	// simulator's; an emulated run counts none).
	FabricTime clock.Duration
	Wall       time.Duration
	Events     uint64
}

// Data is what a report is made of.
type Data struct {
	Verdict
	// Series are the sampled time series.
	Series []simlab.Series
	// Aggregated says the run's telemetry was aggregated for a large
	// fabric (simlab.LargeFabric, SamplerSpec.Aggregate): the report
	// draws distributions over every flow and heat maps per tier
	// (large.go) beside the plots of a small lab.
	Aggregated bool
	// Final is the telemetry gathered at the end of the run.
	Final    []telemetry.Sample
	Jobs     []Job
	Problems []string
}

// Job summarises one workload.
type Job struct {
	Name, Kind string
	Done       bool
	Err        string
	// Flows of perf, background and fe workloads.
	Flows []Flow
	// Collective results, one per size.
	Collective []collective.Result
	// Chakra is a chakra workload's replay.
	Chakra *ChakraRun
	// FCT is the distribution of the completion times of every message
	// of the job's flows (perf, simulated), the one flow_fct_seconds{job}
	// summarises; nil when none completed or the driver keeps none. A
	// large fabric's report draws it (fctChart).
	FCT *fct.Dist `json:"-"`
}

// ChakraRun is a chakra workload's replay: the trace, the NIC of each
// rank, and each step's result (times in picoseconds of fabric time,
// from the step's start) and start (fabric time since the run began).
type ChakraRun struct {
	Trace, Prefix string
	NICs          []string
	Steps         []*chakra.Result
	Starts        []clock.Time
}

// Flow is one flow of a job.
type Flow struct {
	From, To   string
	Bytes      int64
	GoodputBps float64
	// Messages completed (perf) or bursts sent (fe), and their completion
	// times in seconds.
	Messages          int64
	FCTMedian, FCTP99 float64
}

// Write writes the report of d into dir, all or nothing: dir then holds
// this report only (a previous one is replaced), or, if writing failed,
// no report at all (writeAtomic).
func Write(dir string, d Data) error {
	return writeAtomic(dir, func(tmp string) error { return write(tmp, d) })
}

func write(dir string, d Data) error {
	d = namePorts(d)
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	plots, err := writePlots(filepath.Join(dir, "plots"), d)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	md := d // what the metrics files hold
	var thinned int
	if d.Aggregated {
		md.Series, thinned = thin(d.Series)
	}
	det := chooseDetail(md)
	det.thinned = thinned
	if err := writeMetrics(dir, md, det); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeTimeline(dir, d); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeLayout(dir, d); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var junit bytes.Buffer
	if err := scenario.WriteJUnitWith(&junit, d.Scenario.Name, d.Results, scenario.JUnitOptions{File: d.Scenario.Source, Elapsed: d.Wall, Behind: d.Behind}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junit.xml"), junit.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(summary(d, plots, det)), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
