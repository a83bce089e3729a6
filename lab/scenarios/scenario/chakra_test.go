package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/workloads/chakra"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

func i64(name string, v int64) *etpb.AttributeProto {
	return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_Int64Val{Int64Val: v}}
}

// allReduce is a rank's trace of one 1 MiB all-reduce after some compute.
func allReduce() []*etpb.Node {
	return []*etpb.Node{
		{Id: 1, Name: "fwd", Type: etpb.NodeType_COMP_NODE, DurationMicros: 5},
		{Id: 2, Name: "grad_sync", Type: etpb.NodeType_COMM_COLL_NODE, DataDeps: []uint64{1},
			Attr: []*etpb.AttributeProto{i64("comm_type", int64(etpb.CollectiveCommType_ALL_REDUCE)), i64("comm_size", 1<<20)}},
	}
}

// writeTraces writes one file per rank into dir/trace as PREFIX.RANK.et;
// a nil rank is skipped, raw bytes replace a rank's file when given.
func writeTraces(t *testing.T, dir string, ranks [][]*etpb.Node, raw map[int][]byte) string {
	t.Helper()
	td := filepath.Join(dir, "trace")
	if err := os.MkdirAll(td, 0o755); err != nil {
		t.Fatal(err)
	}
	for r, nodes := range ranks {
		var b bytes.Buffer
		if err := chakra.Write(&b, nil, nodes); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		if x, ok := raw[r]; ok {
			data = x
		}
		if nodes == nil && raw[r] == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(td, "step."+string(rune('0'+r))+".et"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return td
}

// TestChakraWorkload resolves a chakra workload: the trace beside the
// scenario, ranks in order by default or as given.
func TestChakraWorkload(t *testing.T) {
	dir := t.TempDir()
	writeTraces(t, dir, [][]*etpb.Node{allReduce(), allReduce(), allReduce()}, nil)
	for _, c := range []struct {
		extra string
		want  []string
	}{
		{"", []string{"host1:gpu0", "host1:gpu1", "host2:gpu0"}},
		{`, ranks: "host4:gpu1,host[1-2]:gpu0"`, []string{"host4:gpu1", "host1:gpu0", "host2:gpu0"}},
	} {
		file := filepath.Join(dir, "s.yaml")
		text := "topology: laptop\nduration: 1ms\nworkloads:\n  - {name: step, kind: chakra, trace: trace, iters: 2" + c.extra + "}\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		w := s.Workloads[0]
		if w.Chakra == nil || len(w.Chakra.Traces) != 3 || w.Chakra.Prefix != "step" || w.Iters != 2 {
			t.Fatalf("%+v", w.Chakra)
		}
		if got := strings.Join(PortNames(w.Ranks), " "); got != strings.Join(c.want, " ") {
			t.Errorf("ranks %s, want %v", got, c.want)
		}
	}
}

// TestChakraBadTraces: every bad trace is named, with its file and node,
// at the scenario line that names the trace.
func TestChakraBadTraces(t *testing.T) {
	unknown := allReduce()
	unknown[0].Type = etpb.NodeType(42)
	dangling := allReduce()
	dangling[1].DataDeps = []uint64{9}
	cycle := allReduce()
	cycle[0].CtrlDeps = []uint64{2}
	bcast := allReduce()
	bcast[1].Attr[0] = i64("comm_type", int64(etpb.CollectiveCommType_BROADCAST))
	var good bytes.Buffer
	if err := chakra.Write(&good, nil, allReduce()); err != nil {
		t.Fatal(err)
	}
	truncated := good.Bytes()[:good.Len()-3]
	for _, c := range []struct {
		name  string
		ranks [][]*etpb.Node
		raw   map[int][]byte
		extra string
		want  []string
	}{
		{"unknown type", [][]*etpb.Node{allReduce(), unknown}, nil, "", []string{"s.yaml:4:39: workload step: trace trace does not validate", `step.1.et: node 1 ("fwd"): unknown node type 42`}},
		{"dangling", [][]*etpb.Node{dangling, allReduce()}, nil, "", []string{`step.0.et: node 2 ("grad_sync")`, "9"}},
		{"cycle", [][]*etpb.Node{cycle, allReduce()}, nil, "", []string{"step.0.et", "cycle"}},
		{"truncated", [][]*etpb.Node{allReduce(), allReduce()}, map[int][]byte{1: truncated}, "", []string{"step.1.et: offset", "truncated"}},
		{"missing rank", [][]*etpb.Node{allReduce(), nil, allReduce()}, nil, "", []string{"rank 1"}},
		{"broadcast", [][]*etpb.Node{bcast, bcast}, nil, "", []string{`step.0.et: node 2 ("grad_sync"): collective BROADCAST is not one rocelab runs`}},
		{"ranks", [][]*etpb.Node{allReduce(), allReduce()}, nil, `, ranks: "host[1-3]:gpu0"`, []string{"ranks: 3 NICs for the 2 ranks of trace trace"}},
		{"too many", make9(), nil, "", []string{"trace trace has 9 ranks, the topology 8 back-end NICs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTraces(t, dir, c.ranks, c.raw)
			file := filepath.Join(dir, "s.yaml")
			text := "topology: laptop\nduration: 1ms\nworkloads:\n  - {name: step, kind: chakra, trace: trace" + c.extra + "}\n"
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(file)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nwant %q", err, w)
				}
			}
		})
	}
}

func make9() [][]*etpb.Node {
	var out [][]*etpb.Node
	for range 9 {
		out = append(out, allReduce())
	}
	return out
}
