// Package report writes the report of a scenario run into a directory:
//
//	summary.md    the scenario, topology and seed; every expectation with
//	              its measured value; key numbers (busbw per job and size,
//	              per-flow rates, chakra step times and per-rank compute,
//	              communication and exposed communication, PFC pauses,
//	              drops, ECN marks, peak queues); the list of plots
//	metrics.csv   time series points: time_s, series, labels, value
//	metrics.json  the series (points and totals), the final telemetry
//	              snapshot and the jobs
//	plots/*.svg   queue depth of the hottest queues, per-flow rates, a PFC
//	plots/*.png   pause timeline per link direction, busbw per size, and
//	              per chakra job JOB-timeline: a Gantt chart per rank
//	              (compute stream, each collective type, send, recv), on
//	              the same fabric-time axis as the queue and PFC plots
//	              (time figures are drawn with their data areas aligned)
//	timeline.json the chakra jobs' timelines, every rank and node, in the
//	              Chrome trace-event format (Perfetto, chrome://tracing)
//	junit.xml     the expectations as JUnit test cases (scenario.WriteJUnit)
//
// A large fabric's run (Data.Aggregated: its telemetry aggregated per
// switch, tier and job, simlab.LargeFabric) adds plots over every flow
// and switch: per perf job the CDFs of its completion times (p50, p99 and
// max marked) and of its flows' goodput (fct-JOB, goodput-JOB); per tier
// of switches (their role: RTSW, CTSW, ATSW) the quantiles of its queues
// over time (tier-queues-ROLE) and heat maps of each switch's deepest
// queue, utilisation and paused queues over time, at most 200 rows
// (heat-queues-ROLE, heat-util-ROLE, heat-pfc-ROLE); the pauses per tier
// (pfc-tiers).
//
// The files are encoded record by record, never a whole document in
// memory. A large lab's metrics files are summarized ("detail":
// "summarized", with a "note"): every series keeps its totals but only the
// hottest keep their points, and tables and plots show a bounded number of
// rows, whatever the size of the lab. Plots are drawn with
// gonum.org/v1/plot (figure.go).
//
// See docs/design.md, "Run reports (lab/scenarios/report)", for the limits
// and what a summarized report keeps, and how each plot is drawn.
package report
