// Package report writes the report of a scenario run into a directory:
//
//	summary.md    the scenario, topology and seed; every expectation with
//	              its measured value; key numbers (busbw per job and size,
//	              per-flow rates, PFC pauses, drops, ECN marks, peak
//	              queues); the list of plots
//	metrics.csv   every time series point: time_s, series, labels, value
//	metrics.json  the same series, and the final telemetry snapshot
//	plots/*.svg   queue depth of the hottest queues, per-flow rates, a PFC
//	plots/*.png   pause timeline per link direction, busbw per size
//	junit.xml     the expectations as JUnit test cases (scenario.WriteJUnit)
//
// Plots are drawn by hand: SVG as text, PNG with image/draw and the
// basicfont face of golang.org/x/image.
package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/clock"
	"github.com/rocelab/rocelab/lab/scenario"
	"github.com/rocelab/rocelab/lab/simlab"
	"github.com/rocelab/rocelab/lab/telemetry"
)

// Data is what a report is made of.
type Data struct {
	Scenario   *scenario.Scenario
	Seed       uint64
	Results    []scenario.Result
	Pass       bool
	FabricTime clock.Duration
	Wall       time.Duration
	Events     uint64
	// Series are the sampled time series.
	Series []simlab.Series
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

// Write writes the report of d into dir (created if needed) and returns
// the plots it drew.
func Write(dir string, d Data) error {
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	plots, err := writePlots(filepath.Join(dir, "plots"), d)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeMetrics(dir, d); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var junit bytes.Buffer
	if err := scenario.WriteJUnitWith(&junit, d.Scenario.Name, d.Results, scenario.JUnitOptions{File: d.Scenario.Source, Elapsed: d.Wall}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junit.xml"), junit.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(summary(d, plots)), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
