package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// rankStat is one rank of a chakra job: its NIC and its times, the mean
// over the steps it finished.
type rankStat struct {
	Rank                              int
	NIC                               string
	Iteration, Compute, Comm, Exposed clock.Duration
}

// rowName is the rank's name on a timeline row.
func (s rankStat) rowName() string {
	n := fmt.Sprintf("rank %d", s.Rank)
	if s.NIC != "" {
		n += " " + s.NIC
	}
	return n
}

// rankStats returns every rank's mean times over run's steps.
func rankStats(run *ChakraRun) []rankStat {
	var out []rankStat
	steps := make([]int, 0)
	for _, st := range run.Steps {
		if st == nil {
			continue
		}
		for _, rk := range st.Ranks {
			for len(out) <= rk.Rank {
				out = append(out, rankStat{Rank: len(out)})
				steps = append(steps, 0)
			}
			s := &out[rk.Rank]
			s.Iteration += rk.Iteration
			s.Compute += rk.Compute
			s.Comm += rk.Comm
			s.Exposed += rk.Exposed
			steps[rk.Rank]++
		}
	}
	for i := range out {
		if n := clock.Duration(steps[i]); n > 0 {
			out[i].Iteration /= n
			out[i].Compute /= n
			out[i].Comm /= n
			out[i].Exposed /= n
		}
		if i < len(run.NICs) {
			out[i].NIC = run.NICs[i]
		}
	}
	return out
}

// slowestRank returns the rank with the longest iteration (of equals, the
// one with the most exposed communication, then the lowest).
func slowestRank(stats []rankStat) int {
	best := 0
	for i, s := range stats {
		b := stats[best]
		if s.Iteration > b.Iteration || s.Iteration == b.Iteration && s.Exposed > b.Exposed {
			best = i
		}
	}
	return best
}

func dur(d clock.Duration) string { return secsText(d.Seconds()) }

// share writes part as a percentage of whole.
func share(part, whole clock.Duration) string {
	if whole <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(part)/float64(whole))
}

// chakraSection writes a chakra job's part of summary.md: its steps,
// per-rank times (every rank up to maxTimelineRanks, else their spread
// and the slowest), the timeline figure beside the queue and PFC plots
// (same fabric-time axis), and where the whole timeline is.
func chakraSection(b *strings.Builder, j Job, plots []string) {
	run := j.Chakra
	stats := rankStats(run)
	steps := "steps"
	if len(run.Steps) == 1 {
		steps = "step"
	}
	fmt.Fprintf(b, "Chakra trace `%s` (prefix `%s`), %d ranks, %d %s.\n\n", run.Trace, run.Prefix, len(stats), len(run.Steps), steps)
	if len(run.Steps) > 0 {
		b.WriteString("| step | starts at (fabric time) | step time (slowest rank) | slowest rank | exposed comm (slowest rank) |\n|---|---|---|---|---|\n")
		for i, st := range run.Steps[:min(len(run.Steps), maxTableRows)] {
			start := "—"
			if i < len(run.Starts) {
				start = dur(clock.Duration(run.Starts[i]))
			}
			if st == nil || len(st.Ranks) == 0 {
				fmt.Fprintf(b, "| %d | %s | not finished | | |\n", i, start)
				continue
			}
			slow := slices.MaxFunc(st.Ranks, func(x, y chakra.RankResult) int {
				return cmp.Or(cmp.Compare(x.Iteration, y.Iteration), cmp.Compare(x.Exposed, y.Exposed))
			})
			fmt.Fprintf(b, "| %d | %s | %s | %d | %s |\n", i, start, dur(st.Iteration), slow.Rank, dur(slow.Exposed))
		}
		if n := len(run.Steps) - maxTableRows; n > 0 {
			fmt.Fprintf(b, "\n… and %d more steps.\n", n)
		}
		b.WriteString("\n")
	}
	if len(stats) == 0 {
		return
	}
	mean := ""
	if len(run.Steps) > 1 {
		mean = fmt.Sprintf(", means over the %d steps", len(run.Steps))
	}
	row := func(name string, s rankStat) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", name, dur(s.Iteration), dur(s.Compute), dur(s.Comm), dur(s.Exposed), share(s.Exposed, s.Iteration))
	}
	head := "| iteration | compute | comm | exposed comm | exposed share of the iteration |\n"
	if len(stats) <= maxTimelineRanks {
		fmt.Fprintf(b, "Per rank%s (exposed: communication in flight while the rank's compute stream was idle):\n\n", mean)
		b.WriteString("| rank " + head + "|---|---|---|---|---|---|\n")
		for _, s := range stats {
			row(s.rowName(), s)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(b, "Over the %d ranks%s (exposed: communication in flight while the rank's compute stream was idle; each column sorted on its own):\n\n", len(stats), mean)
		b.WriteString("| " + head + "|---|---|---|---|---|---|\n")
		col := func(get func(rankStat) clock.Duration) []clock.Duration {
			v := make([]clock.Duration, len(stats))
			for i, s := range stats {
				v[i] = get(s)
			}
			slices.Sort(v)
			return v
		}
		it, co, cm, ex := col(func(s rankStat) clock.Duration { return s.Iteration }), col(func(s rankStat) clock.Duration { return s.Compute }),
			col(func(s rankStat) clock.Duration { return s.Comm }), col(func(s rankStat) clock.Duration { return s.Exposed })
		for _, q := range []struct {
			name string
			i    int
		}{{"min", 0}, {"median", len(stats) / 2}, {"max", len(stats) - 1}} {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | |\n", q.name, dur(it[q.i]), dur(co[q.i]), dur(cm[q.i]), dur(ex[q.i]))
		}
		slow := slices.Clone(stats)
		slices.SortStableFunc(slow, func(x, y rankStat) int {
			return cmp.Or(cmp.Compare(y.Iteration, x.Iteration), cmp.Compare(y.Exposed, x.Exposed))
		})
		const slowest = 8
		fmt.Fprintf(b, "\nThe %d slowest ranks:\n\n| rank "+head+"|---|---|---|---|---|---|\n", slowest)
		for _, s := range slow[:slowest] {
			row(s.rowName(), s)
		}
		b.WriteString("\nEvery rank's times are in `metrics.json` (under `jobs`).\n\n")
	}
	name := timelinePlotName(j.Name)
	if slices.Contains(plots, name) {
		tl := NewTimeline(j.Name, run)
		fmt.Fprintf(b, "Timeline per rank (%s; compute and each collective type, send and receive in their colours), on the run's fabric-time axis; "+
			"the queue and PFC plots below share it:\n\n![%s](plots/%s.svg)\n\n", tl.Caption, name, name)
		if slices.Contains(plots, name+"-zoom") {
			fmt.Fprintf(b, "The steps close up: [svg](plots/%s-zoom.svg) ([png](plots/%s-zoom.png)).\n\n", name, name)
		}
		for _, p := range []string{"queues", "pfc"} {
			if slices.Contains(plots, p) {
				fmt.Fprintf(b, "![%s](plots/%s.svg)\n\n", p, p)
			}
		}
	}
	fmt.Fprintf(b, "The whole timeline (every rank and node, each step at its fabric time) is `%s`, in the Chrome trace-event format: "+
		"open it in Perfetto (https://ui.perfetto.dev) or chrome://tracing (one process per rank, a thread for its compute stream and one per overlapping communication).\n\n", TimelineFile)
}
