// Package report writes the report of a scenario run into a directory:
//
//	summary.md    the scenario, topology and seed; every expectation with
//	              its measured value; key numbers (busbw per job and size,
//	              per-flow rates, PFC pauses, drops, ECN marks, peak
//	              queues); the list of plots
//	metrics.csv   time series points: time_s, series, labels, value
//	metrics.json  the series (points and totals), the final telemetry
//	              snapshot and the jobs
//	plots/*.svg   queue depth of the hottest queues, per-flow rates, a PFC
//	plots/*.png   pause timeline per link direction, busbw per size
//	junit.xml     the expectations as JUnit test cases (scenario.WriteJUnit)
//
// # Size at scale
//
// metrics.csv and metrics.json are encoded record by record into a
// buffered file: the report never holds a whole document in memory. A
// small lab's files have every point of every series and every sample of
// the final snapshot ("detail": "full"). When the series hold more than
// fullPoints points (250,000) or the final snapshot more than
// fullSamples samples (50,000) — a lab of hundreds of switches — the
// files are summarized ("detail": "summarized", with a "note" that says
// what was left out):
//
//   - every series keeps its totals (readings, min, mean, max, last), but
//     only the hotSeries (32) series of each metric with the highest peak
//     (then mean) keep their points, in both files;
//   - "final_totals" gives, for each metric of the final snapshot, its
//     number of samples, of non-zero samples, their sum, min and max;
//     "final" keeps the topSamples (64) largest non-zero samples of each.
//
// summary.md lists at most maxTableRows (32) rows per table: a job with
// more flows shows the rate spread of all and its slowest flows, then
// "… and K more".
//
// Plots are drawn with gonum.org/v1/plot (figure.go): the queue depths
// as steps (each point is the deepest the queue got in its sampling
// window), per-flow rates as lines, the PFC pause state of each link
// direction as filled bands coloured by kind (switch holds its upstream
// in XOFF, egress queue paused, NIC paused), busbw as grouped bars. A
// plot draws at most hotQueues (6) queues, maxFlows (10) flows (the
// busiest by mean rate) and maxRows (24) pause rows, whatever the size
// of the lab; text is Liberation Sans, named in the SVG with Arial (its
// metric twin) and sans-serif as fallbacks.
package report
