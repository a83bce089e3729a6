package chakra

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

const us = clock.Microsecond

// replay runs traces on a simulator where every operation of size s takes s
// microseconds.
func replay(t *testing.T, tr []*Trace) (*Result, error) {
	t.Helper()
	eng := sim.New(1)
	comm := &IdealComm{Sched: eng, Cost: func(_ Kind, _ etpb.CollectiveCommType, size int64, _ int) clock.Duration {
		return clock.Duration(size) * us
	}}
	done := 0
	r, err := Start(tr, Options{Sched: eng, Comm: comm, OnDone: func() { done++ }})
	if err != nil {
		t.Fatal(err)
	}
	eng.Run()
	res, err := r.Result()
	if err == nil && done != 1 {
		t.Errorf("OnDone called %d times, want 1", done)
	}
	return res, err
}

// sp is a span in microseconds: node id, issued, start, end.
type sp struct {
	ID                 uint64
	Issued, Start, End int64
}

type want struct {
	Iteration, Compute, Comm, Exposed int64 // microseconds
	Spans                             []sp
}

func TestReplay(t *testing.T) {
	ar := etpb.CollectiveCommType_ALL_REDUCE
	for _, tc := range []struct {
		name  string
		ranks [][]*etpb.Node
		want  []want
	}{
		{"chain", [][]*etpb.Node{{comp(1, 10), comp(2, 5, 1), comp(3, 3, 2)}},
			[]want{{18, 18, 0, 0, []sp{{1, 0, 0, 10}, {2, 10, 10, 15}, {3, 15, 15, 18}}}}},
		// B and C are released together and share the one stream, in id order.
		{"diamond", [][]*etpb.Node{{comp(1, 10), comp(2, 5, 1), comp(3, 7, 1), comp(4, 2, 2, 3)}},
			[]want{{24, 24, 0, 0, []sp{{1, 0, 0, 10}, {2, 10, 10, 15}, {3, 10, 15, 22}, {4, 22, 22, 24}}}}},
		// Memory nodes take their duration off the compute stream; a
		// metadata node without one completes at once.
		{"memory", [][]*etpb.Node{{pbNode(1, etpb.NodeType_MEM_LOAD_NODE, 2, nil), pbNode(2, etpb.NodeType_METADATA_NODE, 0, []uint64{1}), comp(3, 1, 2)}},
			[]want{{3, 1, 0, 0, []sp{{1, 0, 0, 2}, {2, 2, 2, 2}, {3, 2, 2, 3}}}}},
		// The all-reduce (20 us) runs beside B (15 us); C waits for both:
		// 5 us of the all-reduce are exposed.
		{"overlap", [][]*etpb.Node{{comp(1, 10), coll(2, ar, 20, 1), comp(3, 15, 1), comp(4, 5, 2, 3)}},
			[]want{{35, 30, 20, 5, []sp{{1, 0, 0, 10}, {2, 10, 10, 30}, {3, 10, 10, 25}, {4, 30, 30, 35}}}}},
		// Rank 1 posts its receive at once; the send is issued at 10.
		{"send/recv", [][]*etpb.Node{
			{comp(1, 10), send(2, 1, 7, 4, 1)},
			{recv(1, 0, 7, 4), comp(2, 3, 1)}},
			[]want{
				{14, 10, 4, 4, []sp{{1, 0, 0, 10}, {2, 10, 10, 14}}},
				{17, 3, 14, 14, []sp{{1, 0, 10, 14}, {2, 14, 14, 17}}}}},
		// Rank 3 computes 40 us, the others 10: they wait 30 us for it.
		{"late rank", [][]*etpb.Node{
			{comp(1, 10), coll(2, ar, 8, 1)},
			{comp(1, 10), coll(2, ar, 8, 1)},
			{comp(1, 10), coll(2, ar, 8, 1)},
			{comp(1, 40), coll(2, ar, 8, 1)}},
			[]want{
				{48, 10, 38, 38, []sp{{1, 0, 0, 10}, {2, 10, 40, 48}}},
				{48, 10, 38, 38, []sp{{1, 0, 0, 10}, {2, 10, 40, 48}}},
				{48, 10, 38, 38, []sp{{1, 0, 0, 10}, {2, 10, 40, 48}}},
				{48, 40, 8, 8, []sp{{1, 0, 0, 40}, {2, 40, 40, 48}}}}},
		// Collectives match by order of issue within a group, not across
		// groups: the ranks issue groups a and b in opposite orders.
		{"groups", [][]*etpb.Node{
			{withGroup(coll(1, ar, 2), "a"), withGroup(coll(2, etpb.CollectiveCommType_ALL_GATHER, 3), "b")},
			{withGroup(coll(1, etpb.CollectiveCommType_ALL_GATHER, 3), "b"), withGroup(coll(2, ar, 2), "a")}},
			[]want{
				{3, 0, 3, 3, []sp{{1, 0, 0, 2}, {2, 0, 0, 3}}},
				{3, 0, 3, 3, []sp{{1, 0, 0, 3}, {2, 0, 0, 2}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := replay(t, traces(t, tc.ranks...))
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, r := range res.Ranks {
				w := want{int64(r.Iteration / us), int64(r.Compute / us), int64(r.Comm / us), int64(r.Exposed / us), nil}
				for _, s := range r.Timeline {
					w.Spans = append(w.Spans, sp{s.Node.ID, int64(clock.Duration(s.Issued) / us), int64(clock.Duration(s.Start) / us), int64(clock.Duration(s.End) / us)})
				}
				got = append(got, w)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("replay (-want +got):\n%s", d)
			}
		})
	}
}

func withGroup(n *etpb.Node, g string) *etpb.Node {
	n.Attr = append(n.Attr, str("pg_name", g))
	return n
}

// TestReplayFails covers traces that validate but cannot be replayed.
func TestReplayFails(t *testing.T) {
	ar, ag := etpb.CollectiveCommType_ALL_REDUCE, etpb.CollectiveCommType_ALL_GATHER
	for _, tc := range []struct {
		name  string
		ranks [][]*etpb.Node
		want  []string
	}{
		{"send without receive", [][]*etpb.Node{{send(1, 1, 3, 4)}, {comp(1, 1)}},
			[]string{"rank 0 did not finish", `node 1 ("nb") (send, peer 1, tag 3)`}},
		{"mismatched collectives", [][]*etpb.Node{{coll(1, ar, 4)}, {coll(1, ag, 4)}},
			[]string{`collective 0: rank 0's node 1 ("nb") is ALL_REDUCE, rank 1's node 1 ("nb") is ALL_GATHER`, "rank 1 did not finish"}},
		{"tag mismatch", [][]*etpb.Node{{send(1, 1, 3, 4)}, {recv(1, 0, 4, 4)}},
			[]string{"rank 0 did not finish", "rank 1 did not finish", "recv, peer 0, tag 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := replay(t, traces(t, tc.ranks...))
			if err == nil {
				t.Fatal("replay succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestStartNotMember(t *testing.T) {
	tr := traces(t, []*etpb.Node{coll(1, etpb.CollectiveCommType_ALL_REDUCE, 1)}, []*etpb.Node{comp(1, 1)})
	eng := sim.New(1)
	_, err := Start(tr, Options{Sched: eng, Comm: &IdealComm{Sched: eng}, Groups: map[string][]int{"": {1}}})
	if err == nil || !strings.Contains(err.Error(), `rank 0 is not a member of process group ""`) {
		t.Errorf("Start: %v", err)
	}
}

// TestGroupStream: two collectives of one group issued together run one after
// the other; another group's runs beside them.
func TestGroupStream(t *testing.T) {
	e := sim.New(1)
	cost := func(Kind, etpb.CollectiveCommType, int64, int) clock.Duration { return 10 * clock.Microsecond }
	ideal := &IdealComm{Sched: e, Cost: cost}
	tr := traces(t,
		[]*etpb.Node{grouped(1, "dp"), grouped(2, "dp"), grouped(3, "tp")},
		[]*etpb.Node{grouped(1, "dp"), grouped(2, "dp"), grouped(3, "tp")},
	)
	r, err := Start(tr, Options{Sched: e, Comm: ideal})
	if err != nil {
		t.Fatal(err)
	}
	e.Run()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64][2]clock.Time{1: {0, 10e6}, 2: {10e6, 20e6}, 3: {0, 10e6}}
	for _, rk := range res.Ranks {
		for _, s := range rk.Timeline {
			if w := want[s.Node.ID]; s.Start != w[0] || s.End != w[1] || s.Issued != 0 {
				t.Errorf("rank %d node %d: issued %v start %v end %v, want start %v end %v", rk.Rank, s.Node.ID, s.Issued, s.Start, s.End, w[0], w[1])
			}
		}
	}
}

func grouped(id uint64, group string) *etpb.Node {
	n := coll(id, etpb.CollectiveCommType_ALL_REDUCE, 1<<20)
	n.Attr = append(n.Attr, str("pg_name", group))
	return n
}

// TestRoofline times compute nodes as ASTRA-sim's roofline does:
// num_ops / min(mem × num_ops/tensor_size, peak); CPU nodes keep their
// duration; a node without a tensor size takes no time.
func TestRoofline(t *testing.T) {
	rl := &Roofline{PeakOpsPerSec: 100e12, MemBytesPerSec: 1e12}
	for _, c := range []struct {
		name string
		n    Node
		want clock.Duration
	}{
		{"compute-bound", Node{NumOps: 1e9, TensorSize: 1e6}, 10 * us}, // intensity 1000: 1e15 > peak; 1e9/1e14 s
		{"memory-bound", Node{NumOps: 1e9, TensorSize: 1e8}, 100 * us}, // intensity 10: 1e13 ops/s
		{"cpu", Node{NumOps: 1e9, TensorSize: 1e6, CPUOp: true, Duration: 7 * us}, 7 * us},
		{"no tensor", Node{NumOps: 1e9, Duration: 7 * us}, 0},
	} {
		if got := rl.Time(&c.n); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	compute := (&Roofline{PeakOpsPerSec: 1e12}).Time(&Node{NumOps: 5e6, TensorSize: 1})
	if compute != 5*us {
		t.Errorf("without memory bandwidth: %v, want 5µs", compute)
	}
	// In a replay: two roofline nodes back to back on the stream.
	n := comp(1, 0)
	n.Attr = append(n.Attr, i64("num_ops", 1e9), i64("tensor_size", 1e6))
	m := comp(2, 0, 1)
	m.Attr = append(m.Attr, i64("num_ops", 1e9), i64("tensor_size", 1e8))
	e := sim.New(1)
	r, err := Start(traces(t, []*etpb.Node{n, m}), Options{Sched: e, Comm: &IdealComm{Sched: e}, Roofline: rl})
	if err != nil {
		t.Fatal(err)
	}
	e.Run()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Iteration != 110*us || res.Ranks[0].Compute != 110*us {
		t.Errorf("step %v compute %v, want 110µs", res.Iteration, res.Ranks[0].Compute)
	}
}
