package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// TimelineFile is the name of the chakra jobs' timelines in a report, in
// the Chrome trace-event format (Perfetto and chrome://tracing open it).
const TimelineFile = "timeline.json"

// traceEvent is one event of the Chrome trace-event format: "X" a
// complete event (ts and dur in µs), "M" metadata (process and thread
// names and order).
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   *float64       `json:"ts,omitempty"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Threads of a rank's process: its compute stream, then communication
// lanes from tidComm (a lane per communication that overlaps another),
// memory and metadata lanes from tidMemory.
const (
	tidCompute = 0
	tidComm    = 1
	tidMemory  = 1000
)

// writeTimeline writes TimelineFile when d has chakra jobs: a process per
// rank (pid: the rank, after the ranks of the chakra jobs before it, so
// that the first job's pid is its rank), named "JOB rank R (NIC)"; an "X"
// event per node (every step, ts in fabric µs since the run began), cat
// its kind (compute, collective, send, recv, mem_load, mem_store,
// metadata), args its node id, step, op and the time it was issued.
// Events of one thread never overlap, as both viewers want: overlapping
// communication (and memory) nodes go to further lanes.
func writeTimeline(dir string, d Data) error {
	var runs []Job
	for _, j := range d.Jobs {
		if j.Chakra != nil {
			runs = append(runs, j)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	return writeFile(filepath.Join(dir, TimelineFile), func(w *bufio.Writer) error {
		rw := &recordWriter{w: w}
		w.WriteString(`{"displayTimeUnit": "ns"`)
		rw.open("traceEvents")
		base := 0
		for _, j := range runs {
			ranks := rankStats(j.Chakra)
			for r, st := range ranks {
				pid := base + r
				rw.record(traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": fmt.Sprintf("%s rank %d (%s)", j.Name, r, st.NIC)}})
				rw.record(traceEvent{Name: "process_sort_index", Ph: "M", Pid: pid, Args: map[string]any{"sort_index": pid}})
				writeRank(rw, j.Chakra, r, pid)
			}
			base += len(ranks)
		}
		rw.close()
		w.WriteString("\n}\n")
		return rw.err
	})
}

// writeRank writes one rank's events and names its threads.
func writeRank(rw *recordWriter, run *ChakraRun, rank, pid int) {
	var comm, mem []clock.Time // each lane's end
	lane := func(ends *[]clock.Time, from, to clock.Time) int {
		for i, e := range *ends {
			if e <= from {
				(*ends)[i] = to
				return i
			}
		}
		*ends = append(*ends, to)
		return len(*ends) - 1
	}
	us := func(t clock.Time) *float64 { v := float64(t) / 1e6; return &v }
	compute := false
	for i, st := range run.Steps {
		if st == nil || rank >= len(st.Ranks) || i >= len(run.Starts) {
			continue
		}
		t0 := run.Starts[i]
		for _, s := range st.Ranks[rank].Timeline {
			from, to := t0+s.Start, t0+s.End
			ev := traceEvent{Name: s.Node.Name, Cat: s.Kind.String(), Ph: "X", Pid: pid, Ts: us(from), Dur: us(clock.Time(to.Sub(from))),
				Args: map[string]any{"node": s.Node.ID, "step": i}}
			switch {
			case s.Kind == chakra.Compute:
				ev.Tid, compute = tidCompute, true
			case s.Kind.Comm():
				// From its issue: a collective waiting for its late peers
				// holds its lane.
				ev.Tid = tidComm + lane(&comm, t0+s.Issued, to)
				ev.Args["issued_us"] = *us(t0 + s.Issued)
				if s.Op != "" {
					ev.Args["op"] = s.Op
				}
			default:
				ev.Tid = tidMemory + lane(&mem, from, max(to, from+1))
			}
			rw.record(ev)
		}
	}
	name := func(tid int, n string) {
		rw.record(traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": n}})
		rw.record(traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"sort_index": tid}})
	}
	if compute {
		name(tidCompute, "compute stream")
	}
	for i := range comm {
		name(tidComm+i, fmt.Sprintf("communication %d", i+1))
	}
	for i := range mem {
		name(tidMemory+i, fmt.Sprintf("memory and metadata %d", i+1))
	}
}

// DecodeChakra reads a chakra job's run as metrics.json carries it (a
// Job's "Chakra"), for the replay. A span's kind is written by name
// (chakra.Kind has no text decoder), so it is read into a mirror and
// named back.
func DecodeChakra(raw json.RawMessage) (*ChakraRun, error) {
	var in struct {
		Trace, Prefix string
		NICs          []string
		Starts        []clock.Time
		Steps         []*struct {
			Ranks []struct {
				Rank      int            `json:"rank"`
				Iteration clock.Duration `json:"iteration_ps"`
				Compute   clock.Duration `json:"compute_ps"`
				Comm      clock.Duration `json:"comm_ps"`
				Exposed   clock.Duration `json:"exposed_comm_ps"`
				Timeline  []struct {
					Node   chakra.NodeRef `json:"node"`
					Kind   string         `json:"kind"`
					Op     string         `json:"op"`
					Issued clock.Time     `json:"issued_ps"`
					Start  clock.Time     `json:"start_ps"`
					End    clock.Time     `json:"end_ps"`
				} `json:"timeline"`
			} `json:"ranks"`
			Iteration clock.Duration `json:"iteration_ps"`
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	kinds := map[string]chakra.Kind{}
	for k := chakra.Compute; k <= chakra.Coll; k++ {
		kinds[k.String()] = k
	}
	run := &ChakraRun{Trace: in.Trace, Prefix: in.Prefix, NICs: in.NICs, Starts: in.Starts}
	for i, st := range in.Steps {
		if st == nil {
			run.Steps = append(run.Steps, nil)
			continue
		}
		res := &chakra.Result{Iteration: st.Iteration}
		for r, rk := range st.Ranks {
			if rk.Rank != r {
				return nil, fmt.Errorf("step %d: rank %d at position %d", i, rk.Rank, r)
			}
			out := chakra.RankResult{Rank: rk.Rank, Iteration: rk.Iteration, Compute: rk.Compute, Comm: rk.Comm, Exposed: rk.Exposed}
			for _, s := range rk.Timeline {
				k, ok := kinds[s.Kind]
				if !ok {
					return nil, fmt.Errorf("step %d, rank %d, node %d: kind %q", i, r, s.Node.ID, s.Kind)
				}
				out.Timeline = append(out.Timeline, chakra.Span{Node: s.Node, Kind: k, Op: s.Op, Issued: s.Issued, Start: s.Start, End: s.End})
			}
			res.Ranks = append(res.Ranks, out)
		}
		run.Steps = append(run.Steps, res)
	}
	return run, nil
}
