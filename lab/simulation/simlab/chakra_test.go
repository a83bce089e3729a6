package simlab

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// microbenchmarks is where ASTRA-sim's microbenchmark traces are kept.
const microbenchmarks = "../../../examples/09-chakra/microbenchmarks"

func loadMicro(t *testing.T, op string, npus int) []*chakra.Trace {
	t.Helper()
	tr, err := chakra.LoadDir(filepath.Join(microbenchmarks, op, fmt.Sprintf("%dnpus_1MB", npus)), "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestChakraMicrobenchmarks replays ASTRA-sim's 1 MB microbenchmarks, as
// they are, on the laptop's NICs, and runs the same collective as a
// collective job: a trace of one collective takes what the collective
// takes.
func TestChakraMicrobenchmarks(t *testing.T) {
	ops := map[string]string{"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter", "all_to_all": "alltoall"}
	for _, op := range []string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all"} {
		for _, npus := range []int{4, 8} {
			t.Run(fmt.Sprintf("%s/%d", op, npus), func(t *testing.T) {
				traces := loadMicro(t, op, npus)
				l := build(t, "laptop", Options{Seed: 1, CC: "dcqcn"})
				ranks := l.NICNames()[:npus]
				j, err := l.Chakra(ChakraSpec{Traces: traces, Ranks: ranks})
				if err != nil {
					t.Fatal(err)
				}
				if err := l.RunUntilIdle(clock.Second); err != nil {
					t.Fatal(err)
				}
				if j.Err() != nil {
					t.Fatal(j.Err())
				}
				res := j.Results()
				if len(res) != 1 || len(res[0].Ranks) != npus {
					t.Fatalf("results %+v", res)
				}
				step := res[0].Iteration
				for _, r := range res[0].Ranks {
					if r.Compute != 0 || r.Exposed != r.Comm || r.Iteration > step {
						t.Errorf("rank %d: %+v", r.Rank, r)
					}
				}

				l2 := build(t, "laptop", Options{Seed: 1, CC: "dcqcn"})
				size := int64(1 << 20)
				if op == "all_gather" {
					size *= int64(npus) // comm_size is each rank's input (ChakraOp)
				}
				cj, err := l2.Collective(CollSpec{Op: ops[op], Ranks: ranks, Sizes: []int64{size}, Warmup: -1, Iters: 1})
				if err != nil {
					t.Fatal(err)
				}
				if err := l2.RunUntilIdle(clock.Second); err != nil {
					t.Fatal(err)
				}
				coll := clock.Duration(cj.Results()[0].TimeUs * float64(clock.Microsecond))
				t.Logf("%s on %d NICs: step %v, collective job %v", op, npus, step, coll)
				if d := math.Abs(float64(step-coll)) / float64(coll); d > 0.05 {
					t.Errorf("step %v, collective job %v: %.1f%% apart, want within 5%%", step, coll, 100*d)
				}
			})
		}
	}
}

// TestChakraOverlap runs a step whose all-reduce overlaps compute on one
// rank and not on the other, then a message: exposed communication is
// what compute did not hide.
func TestChakraOverlap(t *testing.T) {
	const compute = 40 * clock.Microsecond
	// rank 0: comp(40 µs) ‖ all-reduce 1 MiB; send 256 KiB to rank 1 after both.
	// rank 1: all-reduce; recv from rank 0; comp(40 µs) after the receive.
	traces := []*chakra.Trace{
		chakraTrace(t, 0, []nodeSpec{
			{id: 1, kind: "comp", dur: compute},
			{id: 2, kind: "coll", size: 1 << 20},
			{id: 3, kind: "send", size: 256 << 10, peer: 1, deps: []uint64{1, 2}},
		}),
		chakraTrace(t, 1, []nodeSpec{
			{id: 1, kind: "coll", size: 1 << 20},
			{id: 2, kind: "recv", size: 256 << 10, peer: 0, deps: []uint64{1}},
			{id: 3, kind: "comp", dur: compute, deps: []uint64{2}},
		}),
	}
	l := build(t, "laptop", Options{Seed: 1, CC: "dcqcn"})
	j, err := l.Chakra(ChakraSpec{Traces: traces, Ranks: []string{"host1:gpu0", "host4:gpu0"}, Iters: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(clock.Second); err != nil {
		t.Fatal(err)
	}
	if j.Err() != nil {
		t.Fatal(j.Err())
	}
	if colls, msgs := j.Counts(); colls != 2 || msgs != 2 {
		t.Errorf("%d collectives, %d messages; want 2 and 2", colls, msgs)
	}
	res := j.Results()
	if len(res) != 2 {
		t.Fatalf("%d iterations, want 2", len(res))
	}
	for i, r := range res {
		r0, r1 := r.Ranks[0], r.Ranks[1]
		span := func(rk chakra.RankResult, id uint64) chakra.Span {
			for _, s := range rk.Timeline {
				if s.Node.ID == id {
					return s
				}
			}
			t.Fatalf("no span of node %d", id)
			return chakra.Span{}
		}
		ar, send := span(r0, 2), span(r0, 3)
		arTime := ar.End.Sub(ar.Start)
		// The all-reduce of 1 MiB on two 400G NICs: ~1 MiB/50 GB/s = 21 µs, under the compute.
		if arTime <= 0 || arTime >= compute {
			t.Fatalf("iteration %d: all-reduce took %v, want in (0, %v)", i, arTime, compute)
		}
		if send.Start != clock.Time(compute) {
			t.Errorf("iteration %d: send started at %v, want when compute ended (%v)", i, send.Start, compute)
		}
		msg := send.End.Sub(send.Start)
		if r0.Exposed != msg {
			t.Errorf("iteration %d: rank 0 exposed %v, want the message's %v (the all-reduce hid behind compute)", i, r0.Exposed, msg)
		}
		recv := span(r1, 2)
		if recv.End != send.End {
			t.Errorf("iteration %d: receive ended %v, send %v", i, recv.End, send.End)
		}
		// Rank 1 waits for its all-reduce, then for the message, then computes.
		if want := clock.Duration(recv.End) + compute; r1.Iteration != want || r.Iteration != want {
			t.Errorf("iteration %d: rank 1 %v, step %v, want %v", i, r1.Iteration, r.Iteration, want)
		}
		if r1.Exposed != clock.Duration(recv.End) || r1.Compute != compute {
			t.Errorf("iteration %d: rank 1 exposed %v compute %v", i, r1.Exposed, r1.Compute)
		}
	}
}

// TestChakraRefuses names what a replay cannot run.
func TestChakraRefuses(t *testing.T) {
	bcast := []*chakra.Trace{
		chakraTrace(t, 0, []nodeSpec{{id: 7, name: "bcast", kind: "coll", size: 64, coll: 5}}),
		chakraTrace(t, 1, []nodeSpec{{id: 7, name: "bcast", kind: "coll", size: 64, coll: 5}}),
	}
	two := loadMicro(t, "all_reduce", 4)
	for _, c := range []struct {
		name string
		spec ChakraSpec
		opts Options
		want string
	}{
		{"broadcast", ChakraSpec{Traces: bcast, Ranks: []string{"host1:gpu0", "host2:gpu0"}}, Options{}, `node 7 ("bcast"): collective BROADCAST is not one rocelab runs`},
		{"ranks", ChakraSpec{Traces: two, Ranks: []string{"host1:gpu0", "host2:gpu0"}}, Options{}, "4 traces for 2 NICs"},
		{"same NIC", ChakraSpec{Traces: two[:2], Ranks: []string{"host1:gpu0", "host1:gpu0"}}, Options{}, "NIC host1:gpu0 is given to two ranks"},
		{"unknown NIC", ChakraSpec{Traces: two[:2], Ranks: []string{"host1:gpu0", "host9:gpu0"}}, Options{}, "host9:gpu0"},
		{"raw", ChakraSpec{Traces: two[:2], Ranks: []string{"host1:gpu0", "host2:gpu0"}}, Options{Raw: true}, "payload-free"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := build(t, "laptop", c.opts)
			_, err := l.Chakra(c.spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// nodeSpec is one node of a test trace: kind comp, coll (coll is its
// Chakra collective type, default ALL_REDUCE), send or recv.
type nodeSpec struct {
	id   uint64
	name string
	kind string
	dur  clock.Duration
	size int64
	coll int64
	peer int32
	deps []uint64
}

// chakraTrace writes rank's nodes as a Chakra file and reads it back.
func chakraTrace(t *testing.T, rank int, nodes []nodeSpec) *chakra.Trace {
	t.Helper()
	i64 := func(name string, v int64) *etpb.AttributeProto {
		return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_Int64Val{Int64Val: v}}
	}
	i32 := func(name string, v int32) *etpb.AttributeProto {
		return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_Int32Val{Int32Val: v}}
	}
	var pbs []*etpb.Node
	for _, n := range nodes {
		pb := &etpb.Node{Id: n.id, Name: cmp.Or(n.name, fmt.Sprintf("%s%d", n.kind, n.id)), DataDeps: n.deps,
			DurationMicros: uint64(n.dur / clock.Microsecond)}
		switch n.kind {
		case "comp":
			pb.Type = etpb.NodeType_COMP_NODE
		case "coll":
			pb.Type = etpb.NodeType_COMM_COLL_NODE
			pb.Attr = []*etpb.AttributeProto{i64("comm_type", n.coll), i64("comm_size", n.size)}
		case "send":
			pb.Type = etpb.NodeType_COMM_SEND_NODE
			pb.Attr = []*etpb.AttributeProto{i32("comm_dst", n.peer), i64("comm_size", n.size)}
		case "recv":
			pb.Type = etpb.NodeType_COMM_RECV_NODE
			pb.Attr = []*etpb.AttributeProto{i32("comm_src", n.peer), i64("comm_size", n.size)}
		}
		pbs = append(pbs, pb)
	}
	var b bytes.Buffer
	if err := chakra.Write(&b, nil, pbs); err != nil {
		t.Fatal(err)
	}
	tr, err := chakra.Read(&b, fmt.Sprintf("test.%d.et", rank), rank)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
