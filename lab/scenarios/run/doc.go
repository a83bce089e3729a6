// Package run runs rocelab scenarios: Sim runs a scenario.Scenario in the
// discrete-event simulator (lab/simulation/simlab) and evaluates its expectations.
//
// A simulated run builds the lab (real frame bytes only when an
// expectation checks collective data), puts a faults.Chain on every link
// direction through fabric.SimOptions.Wrap (an inject.Injector), starts
// every workload at its start time — perf and collective workloads as
// simlab jobs, background elephants and incast bursts as faults.Traffic
// generators on the senders' NICs (they obey PFC: the frames their NIC
// receives are teed to them), front-end bursts and streams the same way on
// FE ports — applies the fault schedule (add at `at`, remove `for` later),
// runs for the scenario's duration, and measures:
//
//   - time series (simlab.Sampler): queue depth of the lossless classes,
//     PFC pause state per link direction, per-flow rates, generator bytes;
//   - telemetry snapshots of every switch, NIC, job and fault at the start,
//     every Options.SnapshotEvery and at the end (expect.Snapshots);
//   - the job samples expectations read (expect.Catalogue, scope OnJob):
//     collective_busbw_bytes_per_second, collective_algbw_bytes_per_second, collective_time_seconds
//     {job,size}, collective_wrong_elements_total{job},
//     flow_goodput_bytes_per_second{job,from,to}, flow_fct_seconds{job?,stat} (count,
//     min, p50, p90, p99, p999, max, avg of every message's completion
//     time, from streaming summaries merged per job and over all jobs, so
//     memory does not grow with the number of messages),
//     flow_slowdown_ratio{job,from,to} (completion time over the flow's
//     ideal) and perftest_latency_seconds{job}.
//
// Both drivers give perf QPs the same tx depth (PerfTxDepth) and number
// QPs in the same order (workloads in start order, flows in flow order;
// in the emulation every perf QP is created before the run's clock
// starts), start a workload's flows at the same fabric instant (the
// emulation tells each client when: nodeapi.PerfRequest.At), count a
// timed flow's goodput as what arrived within its window over the window
// (the emulation's server records it: PerfResult.WindowBytes) and keep
// every message's completion time (core/fct; the emulation's client
// sends its distribution: PerfResult.FCT); a collective's warmup of 0
// means none in both. With Options.MatchEmulation, Sim also runs as
// Emulate does — the emulated switches' configuration at the lab's scale
// and shape, on until every workload finished — so that the two runs of
// a file compare (lab/scenarios/fidelity).
//
// Metrics combines the two: gauges the sampler recorded are read from its
// finer series (each point's maximum), everything else from the
// snapshots. With Options.ReportDir set, the run writes its report there
// (lab/scenarios/report).
package run
