// Package run runs rocelab scenarios: Sim runs a scenario.Scenario in the
// discrete-event simulator (lab/simulation/simlab), Emulate on a lab it
// deploys and destroys, and both evaluate its expectations.
//
// A run builds or deploys the lab, puts faults on link directions, starts
// every workload at its start time (perf and collective jobs, background
// and front-end traffic generators), applies the fault schedule, runs for
// the scenario's duration and measures time series (simlab.Sampler),
// telemetry snapshots (expect.Snapshots) and the job samples expectations
// read (expect.Catalogue, scope OnJob): collective_busbw_bytes_per_second,
// collective_algbw_bytes_per_second, collective_time_seconds{job,size},
// collective_wrong_elements_total{job},
// flow_goodput_bytes_per_second{job,from,to}, flow_fct_seconds{job?,stat}
// (count, min, p50, p90, p99, p999, max, avg of every message's completion
// time, merged per job and over all jobs),
// flow_slowdown_ratio{job,from,to} and perftest_latency_seconds{job}.
// Metrics combines them. Both drivers set up perf
// and collective jobs the same way (PerfTxDepth, QP order, start instants,
// goodput windows, completion times), and with Options.MatchEmulation Sim
// runs the emulated switches' configuration at the lab's scale, so that
// the two runs of a file compare (lab/scenarios/fidelity). With
// Options.ReportDir set, the run writes its report (lab/scenarios/report).
//
// See docs/design.md, "Running scenarios (lab/scenarios/run)", for what a
// simulated run does step by step, the samples it measures, and what both
// drivers do alike.
package run
