package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// maxTimelineRanks is the most ranks a timeline draws: above it, a chosen
// subset (chooseRanks).
const maxTimelineRanks = 16

// Timeline is what the report's timeline figure and the replay draw of
// one chakra job: a row per shown rank, its spans in fabric time since the
// run began (every step, each at its start), the compute stream in lane 0
// and communication in the lanes below.
type Timeline struct {
	Job string `json:"job"`
	// Ranks in the job; Caption says which of them Rows shows.
	Ranks   int            `json:"ranks"`
	Caption string         `json:"caption"`
	Kinds   []TimelineKind `json:"kinds"`
	Rows    []TimelineRow  `json:"rows"`
	// End is when the last step ended (seconds of fabric time).
	End float64 `json:"end_s"`
	// Lanes of a row: the compute stream, then a lane per communication
	// in flight at once (at most maxCommLanes; further ones share the
	// last).
	Lanes int `json:"lanes"`
}

// maxCommLanes is the most communication lanes a timeline row has.
const maxCommLanes = 3

// commLane returns the first of the lanes whose last operation ended by
// from (ends holds each lane's end), taking it until to; a new lane if
// none, up to maxCommLanes, else the one that ends first.
func commLane(ends *[]clock.Time, from, to clock.Time) int {
	for i, e := range *ends {
		if e <= from {
			(*ends)[i] = to
			return i
		}
	}
	if len(*ends) < maxCommLanes {
		*ends = append(*ends, to)
		return len(*ends) - 1
	}
	first := 0
	for i, e := range *ends {
		if e < (*ends)[first] {
			first = i
		}
	}
	(*ends)[first] = max((*ends)[first], to)
	return first
}

// TimelineKind is a legend entry: what a span does and its colour.
type TimelineKind struct {
	Name  string `json:"name"`
	Color string `json:"color"` // #rrggbb
	rgba  color.RGBA
}

// TimelineRow is one rank.
type TimelineRow struct {
	Rank  int            `json:"rank"`
	Name  string         `json:"name"`
	Spans []TimelineSpan `json:"spans"`
}

// TimelineSpan is one node's span (or a collective's wait for its late
// peers, kind waitingKind), in seconds of fabric time.
type TimelineSpan struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
	Kind int     `json:"kind"`
	Lane int     `json:"lane"`
	Name string  `json:"name"`
}

// Span kinds that are not collectives, and their colours; collectives
// take collColors in the order of their names.
const (
	kindCompute = "compute"
	kindSend    = "send"
	kindRecv    = "recv"
	kindMemory  = "memory / metadata"
	kindWaiting = "waiting for peers"
)

var (
	fixedKinds = []struct {
		name string
		col  color.RGBA
	}{
		{kindCompute, palette[0]}, {kindSend, palette[5]}, {kindRecv, palette[9]},
		{kindMemory, palette[7]}, {kindWaiting, color.RGBA{207, 207, 207, 255}},
	}
	collColors = []color.RGBA{palette[1], palette[2], palette[3], palette[4], palette[6], palette[8]}
)

// spanKind names what s does on a timeline: compute, the collective's
// type, send, recv or memory / metadata.
func spanKind(s chakra.Span) string {
	switch s.Kind {
	case chakra.Compute:
		return kindCompute
	case chakra.Coll:
		return cmp.Or(s.Op, "collective")
	case chakra.Send:
		return kindSend
	case chakra.Recv:
		return kindRecv
	}
	return kindMemory
}

// timelineKinds returns the legend of run's spans: compute first, the
// collective types by name, then send, recv, memory and waiting; the
// same run always gets the same colours.
func timelineKinds(run *ChakraRun) []TimelineKind {
	seen := map[string]bool{}
	var colls []string
	for _, st := range run.Steps {
		if st == nil {
			continue
		}
		for _, rk := range st.Ranks {
			for _, s := range rk.Timeline {
				k := spanKind(s)
				if !seen[k] {
					seen[k] = true
					if s.Kind == chakra.Coll {
						colls = append(colls, k)
					}
				}
				if s.Kind.Comm() && s.Start > s.Issued {
					seen[kindWaiting] = true
				}
			}
		}
	}
	slices.Sort(colls)
	var out []TimelineKind
	add := func(name string, c color.RGBA) {
		out = append(out, TimelineKind{Name: name, Color: fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B), rgba: c})
	}
	for _, f := range fixedKinds[:1] {
		if seen[f.name] {
			add(f.name, f.col)
		}
	}
	for i, c := range colls {
		add(c, collColors[i%len(collColors)])
	}
	for _, f := range fixedKinds[1:] {
		if seen[f.name] {
			add(f.name, f.col)
		}
	}
	return out
}

// NewTimeline returns the timeline of a chakra job's run: every rank up
// to maxTimelineRanks, else the subset chooseRanks picks.
func NewTimeline(job string, run *ChakraRun) Timeline {
	stats := rankStats(run)
	tl := Timeline{Job: job, Ranks: len(stats), Kinds: timelineKinds(run), Lanes: 1}
	kindIndex := map[string]int{}
	for i, k := range tl.Kinds {
		kindIndex[k.Name] = i
	}
	shown, caption := chooseRanks(stats)
	tl.Caption = caption
	for _, r := range shown {
		row := TimelineRow{Rank: r, Name: stats[r].rowName()}
		for i, st := range run.Steps {
			if st == nil || r >= len(st.Ranks) || i >= len(run.Starts) {
				continue
			}
			t0 := run.Starts[i]
			at := func(t clock.Time) float64 { return clock.Duration(t0 + t).Seconds() }
			spans := slices.Clone(st.Ranks[r].Timeline)
			slices.SortStableFunc(spans, func(a, b chakra.Span) int { return cmp.Compare(a.Issued, b.Issued) })
			var ends []clock.Time // each communication lane's end
			for _, s := range spans {
				lane := 0
				if s.Kind.Comm() {
					lane = 1 + commLane(&ends, s.Issued, s.End)
					tl.Lanes = max(tl.Lanes, lane+1)
					if s.Start > s.Issued {
						row.Spans = append(row.Spans, TimelineSpan{From: at(s.Issued), To: at(s.Start), Kind: kindIndex[kindWaiting], Lane: lane, Name: s.Node.Name + " (waiting for peers)"})
					}
				}
				row.Spans = append(row.Spans, TimelineSpan{From: at(s.Start), To: at(s.End), Kind: kindIndex[spanKind(s)], Lane: lane, Name: s.Node.Name})
				tl.End = max(tl.End, at(s.End))
			}
		}
		tl.Rows = append(tl.Rows, row)
	}
	return tl
}

// chooseRanks returns the ranks a timeline shows and a caption naming
// them: all of them up to maxTimelineRanks; else maxTimelineRanks ranks
// spread evenly from rank 0 to the last, the slowest rank and the one
// with the most exposed communication taking the place of the spread
// rank nearest to each, in rank order.
func chooseRanks(stats []rankStat) ([]int, string) {
	n := len(stats)
	if n <= maxTimelineRanks {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, fmt.Sprintf("all %d ranks", n)
	}
	slow, exposed := slowestRank(stats), 0
	for i, s := range stats {
		if s.Exposed > stats[exposed].Exposed {
			exposed = i
		}
	}
	pick := make([]int, maxTimelineRanks)
	for i := range pick {
		pick[i] = int(math.Round(float64(i) * float64(n-1) / float64(maxTimelineRanks-1)))
	}
	parts := []string{"rank 0", fmt.Sprintf("the slowest (rank %d)", slow)}
	if slow == 0 {
		parts = []string{"rank 0 (the slowest)"}
	}
	fixed := []int{0}
	for _, f := range []int{slow, exposed} {
		if slices.Contains(fixed, f) {
			continue
		}
		if f == exposed {
			parts = append(parts, fmt.Sprintf("the most exposed communication (rank %d)", exposed))
		}
		fixed = append(fixed, f)
		if slices.Contains(pick, f) {
			continue
		}
		near := -1
		for i, r := range pick {
			if !slices.Contains(fixed, r) && (near < 0 || abs(r-f) < abs(pick[near]-f)) {
				near = i
			}
		}
		pick[near] = f
	}
	slices.Sort(pick)
	parts = append(parts, fmt.Sprintf("and ranks spread evenly to rank %d", n-1))
	return pick, fmt.Sprintf("%d of %d ranks: %s", len(pick), n, strings.Join(parts, ", "))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// timelineChart is the Gantt chart of a chakra job on the run's fabric
// time axis (the queue and PFC plots' axis), or, when zoom, on the steps'
// span only.
func (d Data) timelineChart(j Job, unit string, mul, xmax float64, zoom bool) *figure {
	tl := NewTimeline(j.Name, j.Chakra)
	if len(tl.Rows) == 0 || tl.End <= 0 {
		return nil
	}
	below := "communication (below, a lane per operation in flight at once)"
	if tl.Lanes <= 2 {
		below = "communication (below)"
	}
	title := fmt.Sprintf("%s: per-rank timeline, compute stream (top) and %s\n(%s)", j.Name, below, tl.Caption)
	if zoom {
		title = fmt.Sprintf("%s: the steps close up, compute stream (top) and %s\n(%s)", j.Name, below, tl.Caption)
		u, m := timeUnit(clock.Duration(tl.End * 1e12))
		unit, mul, xmax = u, m, tl.End*m*1.02
	}
	f := &figure{Title: title, XLabel: "fabric time (" + unit + ")", XMax: xmax, Lanes: tl.Lanes, Aligned: !zoom}
	for _, k := range tl.Kinds {
		f.Kinds = append(f.Kinds, bandKind{k.Name, k.rgba})
	}
	for _, r := range tl.Rows {
		row := bandRow{Name: r.Name}
		// Waits first, so that the spans they lead to are drawn over them.
		spans := slices.Clone(r.Spans)
		slices.SortStableFunc(spans, func(a, b TimelineSpan) int {
			return cmp.Compare(btoi(tl.Kinds[b.Kind].Name == kindWaiting), btoi(tl.Kinds[a.Kind].Name == kindWaiting))
		})
		for _, s := range spans {
			row.Spans = append(row.Spans, [2]float64{s.From * mul, s.To * mul})
			row.Kinds = append(row.Kinds, s.Kind)
			row.Lanes = append(row.Lanes, s.Lane)
		}
		f.Rows = append(f.Rows, row)
	}
	return f
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// timelinePlotName is the base name of a job's timeline plot.
func timelinePlotName(job string) string {
	return fileSafe(job) + "-timeline"
}

// fileSafe keeps letters, digits, '-', '_' and '.' of s, else '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
