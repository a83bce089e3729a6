package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
)

// sum adds the final values of the samples called name whose labels
// include match.
func (d Data) sum(name string, match ...telemetry.Label) float64 {
	return telemetry.Sum(d.Final, name, match...)
}

func gbps(bps float64) string { return fmt.Sprintf("%.1f Gb/s", bps/1e9) }

func bytesText(b float64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.2f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// fctText is a completion-time statistic: "—" when there is none to show
// (no message completed, or an emulated run, whose nodes keep no
// per-message times), never a "0 ns" no message took.
func fctText(s float64, messages int64) string {
	if s <= 0 || messages == 0 {
		return "—"
	}
	return secsText(s)
}

func secsText(s float64) string {
	switch {
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.1f µs", s*1e6)
	}
	return fmt.Sprintf("%.0f ns", s*1e9)
}

// maxTableRows is the most rows summary.md lists in a table.
const maxTableRows = 32

// summary renders summary.md.
func summary(d Data, plots []string, det *detail) string {
	var b strings.Builder
	sc := d.Scenario
	verdict := "PASS"
	if !d.Pass {
		verdict = "FAIL"
	}
	if d.Behind != "" {
		verdict = "BEHIND"
	}
	fmt.Fprintf(&b, "# %s — %s\n\n", sc.Name, verdict)
	if d.Behind != "" {
		fmt.Fprintf(&b, "**Not a verdict: the lab fell %s**\n\n", d.Behind)
	}
	if sc.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", sc.Description)
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| scenario | `%s` |\n| topology | %s (%s) |\n| seed | %d |\n", sc.Source, sc.Topology.Name, sc.TopologyRef, d.Seed)
	if d.Mode != "" {
		fmt.Fprintf(&b, "| mode | %s |\n", d.Mode)
	}
	events := fmt.Sprint(d.Events)
	if d.Events == 0 {
		events = "— (an emulated run: the nodes count frames, not events)"
	}
	fmt.Fprintf(&b, "| fabric time | %v |\n| wall time | %v |\n| events | %s |\n\n", d.FabricTime, d.Wall.Round(1e6), events)

	b.WriteString("## Expectations\n\n| | expectation | measured |\n|---|---|---|\n")
	for _, r := range d.Results {
		mark := "PASS"
		if !r.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "| %s | `%s` (line %d) | %s |\n", mark, r.Expectation, r.Pos.Line, strings.ReplaceAll(r.Message, "|", "\\|"))
	}
	if len(d.Problems) > 0 {
		b.WriteString("\n## Problems\n\n")
		for _, p := range d.Problems[:min(len(d.Problems), maxTableRows)] {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		if n := len(d.Problems) - maxTableRows; n > 0 {
			fmt.Fprintf(&b, "- … and %d more\n", n)
		}
	}

	b.WriteString("\n## Jobs\n\n")
	for _, j := range d.Jobs {
		state := "finished"
		if !j.Done {
			state = "not finished"
		}
		if j.Err != "" {
			state = "failed: " + j.Err
		}
		fmt.Fprintf(&b, "### %s (%s, %s)\n\n", j.Name, j.Kind, state)
		if len(j.Collective) > 0 {
			b.WriteString("| size | time | algbw | busbw |\n|---|---|---|---|\n")
			for _, r := range j.Collective {
				fmt.Fprintf(&b, "| %s | %s | %.1f Gb/s | %.1f Gb/s |\n", sizeName(r.Size), secsText(r.TimeUs/1e6), r.AlgBW*8, r.BusBW*8)
			}
			b.WriteString("\n")
		}
		if len(j.Flows) > 0 {
			flowTable(&b, j.Flows)
		}
		if d.Aggregated && j.FCT != nil && j.FCT.Count() > 0 {
			p50, p99, mx := FCTStats(j.FCT)
			fmt.Fprintf(&b, "Completion times of all %d messages: p50 %s, p99 %s, max %s (plots/fct-%s).\n\n",
				j.FCT.Count(), secsText(p50), secsText(p99), secsText(mx), plotFileName(j.Name))
		}
		if j.Chakra != nil {
			chakraSection(&b, j, plots)
		}
	}

	b.WriteString("## Fabric\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("PFC XOFF frames sent by switches", fmt.Sprintf("%.0f", d.sum("switch_pg_pfc_xoff_frames_total")))
	row("time switches held upstream in XOFF", secsText(d.sum("switch_pg_xoff_seconds_total")))
	row("PFC frames received by NICs", fmt.Sprintf("%.0f", d.sum("nic_pfc_rx_frames_total")))
	row("time NICs spent paused", secsText(d.sum("nic_paused_seconds_total")))
	row("ECN marks", fmt.Sprintf("%.0f", d.sum("switch_queue_ecn_marked_packets_total")))
	row("CNPs received by NICs", fmt.Sprintf("%.0f", d.sum("nic_cnp_rx_total")))
	row("switch drops", fmt.Sprintf("%.0f%s", d.sum("switch_drop_packets_total"), d.dropReasons()))
	row("packets dropped by faults", fmt.Sprintf("%.0f", d.sum("fault_packets_total", telemetry.Label{Name: "event", Value: "dropped"})))
	row("PFC watchdog trips", fmt.Sprintf("%.0f", d.sum("switch_queue_watchdog_events_total")))
	row("retransmitted packets", fmt.Sprintf("%.0f", d.sum("qp_retransmits_total")))
	row("retransmission timeouts", fmt.Sprintf("%.0f", d.sum("qp_timeouts_total")))

	var peaks []telemetry.Sample
	for _, s := range d.Final {
		if s.Name == "switch_queue_peak_bytes" && s.Value > 0 {
			peaks = append(peaks, s)
		}
	}
	slices.SortStableFunc(peaks, func(a, b telemetry.Sample) int { return cmp.Compare(b.Value, a.Value) })
	if len(peaks) > 0 {
		b.WriteString("\n### Peak queues\n\n| queue | peak |\n|---|---|\n")
		for _, s := range peaks[:min(len(peaks), 8)] {
			fmt.Fprintf(&b, "| %s tc%s | %s |\n", d.portName(s.Label("node"), s.Label("port")), s.Label("tc"), bytesText(s.Value))
		}
	}

	b.WriteString("\n## Plots\n\n")
	switch {
	case d.Aggregated && len(d.tiers()) > 0:
		b.WriteString("A large fabric: the telemetry was aggregated per switch, tier and job (no series per queue, port or flow), " +
			"and the plots summarise every flow and switch: completion-time and goodput distributions per job, " +
			"queue quantiles and pauses per tier, and per tier heat maps of queues and utilisation.\n\n")
	case d.Aggregated:
		b.WriteString("A large fabric: the plots summarise every flow of a job (completion-time and goodput distributions).\n\n")
	}
	if len(plots) == 0 {
		b.WriteString("(none: nothing was queued, paused or measured per flow)\n")
	}
	for _, p := range plots {
		fmt.Fprintf(&b, "- [%s](plots/%s.svg) ([png](plots/%s.png))\n", p, p, p)
	}
	b.WriteString("\nFiles: `metrics.csv` (time_s, series, labels, value), `metrics.json`, `junit.xml`")
	for _, j := range d.Jobs {
		if j.Chakra != nil {
			b.WriteString(", `" + TimelineFile + "` (the chakra jobs' timelines: Perfetto, chrome://tracing)")
			break
		}
	}
	b.WriteString(".\n")
	switch {
	case det.allSeries:
		fmt.Fprintf(&b, "\nThe metrics files are summarized: every series keeps its points%s; the final telemetry keeps per-metric totals "+
			"and the %d largest samples of each metric. See `note` in `metrics.json`.\n", det.thinText(), topSamples)
	case det.summarized:
		fmt.Fprintf(&b, "\nThe metrics files are summarized (a lab this size would write every point of %d series): "+
			"every series keeps its totals, and the %d series of each metric with the highest peak keep their points "+
			"(%d series, %d of %d points); the final telemetry keeps per-metric totals and the %d largest samples of each metric. "+
			"See `note` in `metrics.json`.\n", len(d.Series), hotSeries, det.keptSeries, det.keptPoints, det.points, topSamples)
	case det.thinned > 0:
		fmt.Fprintf(&b, "\nThe metrics files keep every series%s.\n", det.thinText())
	}
	return b.String()
}

// dropReasons lists the switch drop counts by reason.
func (d Data) dropReasons() string {
	by := map[string]float64{}
	for _, s := range d.Final {
		if s.Name == "switch_drop_packets_total" && s.Value > 0 {
			by[s.Label("reason")] += s.Value
		}
	}
	if len(by) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, by[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// flowTable lists a job's flows: all of them up to maxTableRows, else the
// spread of their rates and the slowest flows, then how many were left
// out.
func flowTable(b *strings.Builder, flows []Flow) {
	shown := flows
	if len(flows) > maxTableRows {
		shown = slices.Clone(flows)
		slices.SortStableFunc(shown, func(x, y Flow) int { return cmp.Compare(x.GoodputBps, y.GoodputBps) })
		fmt.Fprintf(b, "%d flows, rate min %s, median %s, max %s; the %d slowest:\n\n", len(flows),
			gbps(shown[0].GoodputBps), gbps(shown[len(shown)/2].GoodputBps), gbps(shown[len(shown)-1].GoodputBps), maxTableRows)
		shown = shown[:maxTableRows]
	}
	b.WriteString("| flow | bytes | rate | completions | median | p99 |\n|---|---|---|---|---|---|\n")
	for _, f := range shown {
		fmt.Fprintf(b, "| %s → %s | %s | %s | %d | %s | %s |\n", f.From, f.To, bytesText(float64(f.Bytes)), gbps(f.GoodputBps),
			f.Messages, fctText(f.FCTMedian, f.Messages), fctText(f.FCTP99, f.Messages))
	}
	if n := len(flows) - len(shown); n > 0 {
		fmt.Fprintf(b, "\n… and %d more flows (every flow is in `metrics.json`, under `jobs`).\n", n)
	}
	b.WriteString("\n")
}
