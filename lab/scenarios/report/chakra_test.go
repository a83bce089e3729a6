package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// chakraRun is a replay of steps steps on ranks ranks: per rank a compute
// node overlapping an all-reduce that waits for its late peers, then a
// send to the next rank and a receive from the previous one, at once.
// Rank slow computes twice as long, which makes it the slowest.
func chakraRun(ranks, steps, slow int) *ChakraRun {
	us := func(v int) clock.Time { return clock.Time(v) * clock.Time(clock.Microsecond) }
	run := &ChakraRun{Trace: "tx", Prefix: "tx"}
	for r := range ranks {
		run.NICs = append(run.NICs, fmt.Sprintf("host%d:gpu%d", r/2+1, r%2))
	}
	for i := range steps {
		res := &chakra.Result{}
		for r := range ranks {
			comp := 10
			if r == slow {
				comp = 20
			}
			tl := []chakra.Span{
				{Node: chakra.NodeRef{ID: 0, Name: "fwd"}, Kind: chakra.Compute, Start: 0, End: us(comp)},
				{Node: chakra.NodeRef{ID: 1, Name: "grad_ar"}, Kind: chakra.Coll, Op: "ALL_REDUCE", Issued: us(2), Start: us(4), End: us(comp + 5)},
				{Node: chakra.NodeRef{ID: 2, Name: "act_send"}, Kind: chakra.Send, Issued: us(comp + 5), Start: us(comp + 5), End: us(comp + 8)},
				{Node: chakra.NodeRef{ID: 3, Name: "act_recv"}, Kind: chakra.Recv, Issued: us(comp + 5), Start: us(comp + 5), End: us(comp + 9)},
			}
			it := clock.Duration(us(comp + 9))
			res.Ranks = append(res.Ranks, chakra.RankResult{Rank: r, Iteration: it, Compute: clock.Duration(us(comp)),
				Comm: clock.Duration(us(comp + 7)), Exposed: clock.Duration(us(9)), Timeline: tl})
			res.Iteration = max(res.Iteration, it)
		}
		run.Steps = append(run.Steps, res)
		run.Starts = append(run.Starts, us(40*i))
	}
	return run
}

// TestTimelineFigure renders a chakra job's timeline and checks that the
// SVG names every rank it shows (all of 4; 16 of 40, rank 0 and the
// slowest among them, the caption saying which) and has a legend entry
// per kind of span.
func TestTimelineFigure(t *testing.T) {
	for _, tc := range []struct {
		ranks, slow int
		rows        []int
		caption     string
	}{
		{4, 2, []int{0, 1, 2, 3}, "all 4 ranks"},
		{40, 37, []int{0, 37}, "16 of 40 ranks: rank 0, the slowest (rank 37)"},
	} {
		t.Run(fmt.Sprint(tc.ranks), func(t *testing.T) {
			d := Data{Jobs: []Job{{Name: "tx", Kind: "chakra", Done: true, Chakra: chakraRun(tc.ranks, 2, tc.slow)}}}
			d.FabricTime = 100 * clock.Microsecond
			unit, mul := timeUnit(d.FabricTime)
			f := d.timelineChart(d.Jobs[0], unit, mul, 100, false)
			if f == nil {
				t.Fatal("no figure")
			}
			if want := min(tc.ranks, maxTimelineRanks); len(f.Rows) != want {
				t.Errorf("%d rows, want %d", len(f.Rows), want)
			}
			svg, _, err := f.render()
			if err != nil {
				t.Fatal(err)
			}
			doc := parseSVG(t, svg)
			all := strings.Join(doc.texts, "\n")
			for _, r := range tc.rows {
				if name := fmt.Sprintf("rank %d host%d:gpu%d", r, r/2+1, r%2); !slices.Contains(doc.texts, name) {
					t.Errorf("no row %q", name)
				}
			}
			for _, k := range []string{kindCompute, "ALL_REDUCE", kindSend, kindRecv, kindWaiting} {
				if !slices.Contains(doc.texts, k) {
					t.Errorf("legend lacks %q", k)
				}
			}
			if slices.Contains(doc.texts, kindMemory) {
				t.Errorf("legend names %q, which no span is", kindMemory)
			}
			if !strings.Contains(all, tc.caption) {
				t.Errorf("title lacks %q:\n%s", tc.caption, all)
			}
			// Spans are placed at their step's start: the last ends at
			// the second step's start plus the slowest iteration.
			if tl := NewTimeline("tx", d.Jobs[0].Chakra); tl.End != 69e-6 && tc.slow < tc.ranks {
				t.Errorf("timeline ends at %g s, want 69e-6", tl.End)
			}
		})
	}
}

// TestChooseRanks: above maxTimelineRanks, rank 0, the slowest and the
// most exposed are shown, with ranks spread over the rest, no rank twice.
func TestChooseRanks(t *testing.T) {
	for _, tc := range []struct {
		n, slow, exposed int
		want             []int // ranks that must be shown
	}{
		{3, 1, 1, []int{0, 1, 2}},
		{16, 5, 5, nil},
		{17, 16, 3, []int{0, 3, 16}},
		{17, 8, 9, []int{0, 8, 9, 16}},
		{512, 300, 7, []int{0, 7, 300, 511}},
		{40, 0, 0, []int{0, 39}},
	} {
		stats := make([]rankStat, tc.n)
		for i := range stats {
			stats[i] = rankStat{Rank: i, Iteration: 10, Exposed: 1}
		}
		stats[tc.slow].Iteration = 20
		stats[tc.exposed].Exposed = 5
		got, caption := chooseRanks(stats)
		if len(got) != min(tc.n, maxTimelineRanks) {
			t.Errorf("%d ranks: %d shown (%v), want %d", tc.n, len(got), got, min(tc.n, maxTimelineRanks))
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("%d ranks: %v not ascending and distinct", tc.n, got)
		}
		for _, r := range tc.want {
			if !slices.Contains(got, r) {
				t.Errorf("%d ranks: %v lacks rank %d (%s)", tc.n, got, r, caption)
			}
		}
	}
}

// TestTimelineJSON writes a chakra job's timeline and checks its shape:
// a Chrome trace-event document whose "X" events have pid = rank, the
// compute stream in tid 0 and communication in further threads that
// never overlap within one, every thread and process named.
func TestTimelineJSON(t *testing.T) {
	dir := t.TempDir()
	d := Data{Jobs: []Job{{Name: "tx", Kind: "chakra", Chakra: chakraRun(4, 2, 1)}, {Name: "perf", Kind: "perf"}}}
	if err := writeTimeline(dir, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, TimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unit   string `json:"displayTimeUnit"`
		Events []struct {
			Name, Cat, Ph string
			Ts, Dur       *float64
			Pid, Tid      int
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	type thread struct{ pid, tid int }
	named := map[thread]string{}
	procs := map[int]string{}
	type span struct {
		from, to float64
		cat      string
	}
	spans := map[thread][]span{}
	kinds := map[string]int{}
	for _, e := range doc.Events {
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				procs[e.Pid] = e.Args["name"].(string)
			case "thread_name":
				named[thread{e.Pid, e.Tid}] = e.Args["name"].(string)
			}
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Dur < 0 {
				t.Fatalf("X event without ts or dur: %+v", e)
			}
			spans[thread{e.Pid, e.Tid}] = append(spans[thread{e.Pid, e.Tid}], span{*e.Ts, *e.Ts + *e.Dur, e.Cat})
			kinds[e.Cat]++
		default:
			t.Errorf("event of phase %q", e.Ph)
		}
	}
	if diff := cmp.Diff(map[string]int{"compute": 8, "collective": 8, "send": 8, "recv": 8}, kinds); diff != "" {
		t.Errorf("events per kind (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]string{0: "tx rank 0 (host1:gpu0)", 1: "tx rank 1 (host1:gpu1)", 2: "tx rank 2 (host2:gpu0)", 3: "tx rank 3 (host2:gpu1)"}, procs); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	for th, ss := range spans {
		if named[th] == "" {
			t.Errorf("thread %v unnamed", th)
		}
		for _, s := range ss {
			if (s.cat == "compute") != (th.tid == tidCompute) {
				t.Errorf("%s event in thread %d (%s)", s.cat, th.tid, named[th])
			}
		}
		slices.SortFunc(ss, func(a, b span) int { return int(a.from*1e6 - b.from*1e6) })
		for i := 1; i < len(ss); i++ {
			if ss[i].from < ss[i-1].to {
				t.Errorf("thread %v (%s): events overlap: %v then %v", th, named[th], ss[i-1], ss[i])
			}
		}
	}
	// Send and receive start together: two communication threads.
	if named[thread{0, tidComm + 1}] == "" {
		t.Errorf("rank 0 has no second communication thread: %v", named)
	}
	// Fabric time: the second step's events start 40 µs in.
	if x := spans[thread{0, tidCompute}]; len(x) != 2 || x[1].from != 40 {
		t.Errorf("rank 0's compute events %v, want the second at 40 µs", x)
	}
	// No chakra job, no file.
	empty := t.TempDir()
	if err := writeTimeline(empty, Data{Jobs: []Job{{Name: "perf"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, TimelineFile)); !os.IsNotExist(err) {
		t.Errorf("a report without chakra jobs has %s (%v)", TimelineFile, err)
	}
}

// TestChakraSummary: a few ranks get a row each; many get their spread
// and the slowest, not a row each.
func TestChakraSummary(t *testing.T) {
	for _, tc := range []struct {
		ranks      int
		has, hasnt []string
	}{
		{4, []string{"| rank 2 host2:gpu0 | 29.0 µs | 20.0 µs |", "| 0 | 0 ns | 29.0 µs | 2 | 9.0 µs |", "| 1 | 40.0 µs |", TimelineFile, "Perfetto", "![tx-timeline](plots/tx-timeline.svg)"},
			[]string{"| median |"}},
		{512, []string{"| min | 19.0 µs | 10.0 µs |", "| median | 19.0 µs |", "| max | 29.0 µs | 20.0 µs |", "The 8 slowest ranks", "| rank 2 host2:gpu0 | 29.0 µs |", "16 of 512 ranks"},
			[]string{"| rank 300 "}},
	} {
		var b strings.Builder
		chakraSection(&b, Job{Name: "tx", Chakra: chakraRun(tc.ranks, 2, 2)}, []string{"tx-timeline", "queues"})
		s := b.String()
		for _, w := range tc.has {
			if !strings.Contains(s, w) {
				t.Errorf("%d ranks: summary lacks %q:\n%s", tc.ranks, w, s)
			}
		}
		for _, w := range tc.hasnt {
			if strings.Contains(s, w) {
				t.Errorf("%d ranks: summary has %q", tc.ranks, w)
			}
		}
		if rows := strings.Count(s, "\n| rank "); rows > maxTimelineRanks {
			t.Errorf("%d ranks: %d rank rows", tc.ranks, rows)
		}
	}
}

// TestDecodeChakra: a chakra job written to metrics.json reads back as
// the same run.
func TestDecodeChakra(t *testing.T) {
	want := chakraRun(3, 2, 1)
	b, err := json.Marshal(Job{Name: "tx", Chakra: want})
	if err != nil {
		t.Fatal(err)
	}
	var j struct{ Chakra json.RawMessage }
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeChakra(j.Chakra)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if _, err := DecodeChakra(json.RawMessage(`{"Steps":[{"ranks":[{"rank":0,"timeline":[{"kind":"teleport"}]}]}]}`)); err == nil || !strings.Contains(err.Error(), "teleport") {
		t.Errorf("an unknown kind: %v", err)
	}
}
