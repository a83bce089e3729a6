package chakra

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

var update = flag.Bool("update", false, "rewrite testdata/allreduce.*.et")

// fixture is testdata/allreduce: four ranks, each computes, all-reduces
// 1 MiB and computes again; ranks 0 and 1 also exchange a message.
func fixture() [][]*etpb.Node {
	var ranks [][]*etpb.Node
	for r := range 4 {
		nodes := []*etpb.Node{comp(1, 100), coll(2, etpb.CollectiveCommType_ALL_REDUCE, 1<<20, 1), comp(3, 50, 2)}
		switch r {
		case 0:
			nodes = append(nodes, send(4, 1, 9, 4096, 3))
		case 1:
			nodes = append(nodes, recv(4, 0, 9, 4096, 3))
		}
		ranks = append(ranks, nodes)
	}
	return ranks
}

func TestFixture(t *testing.T) {
	if *update {
		for r, nodes := range fixture() {
			name := filepath.Join("testdata", "allreduce."+string(rune('0'+r))+".et")
			if err := os.WriteFile(name, encode(t, nodes...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, err := LoadDir("testdata", "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 4 {
		t.Fatalf("%d ranks, want 4", len(tr))
	}
	n := tr[1].Node(2)
	if n == nil || n.Kind != Coll || n.CollType != etpb.CollectiveCommType_ALL_REDUCE || n.Size != 1<<20 || tr[1].Meta.GetVersion() != "0.0.4" {
		t.Errorf("rank 1 node 2 = %+v", n)
	}
	if r := tr[1].Node(4); r == nil || r.Kind != Recv || r.Peer != 0 || r.Tag != 9 {
		t.Errorf("rank 1 node 4 = %+v", r)
	}
	res, err := replay(t, tr)
	if err != nil {
		t.Fatal(err)
	}
	// 100 us, then the all-reduce (1 MiB at 1 us a byte), 50 us, the message.
	if want := (100 + 1<<20 + 50 + 4096) * us; res.Iteration != want {
		t.Errorf("iteration %v, want %v", res.Iteration, want)
	}
}

// TestBad holds one case per problem Load must report, each with what the
// message must say (the file, and the node by id and name).
func TestBad(t *testing.T) {
	good := encode(t, comp(1, 1))
	mk := func(nodes ...*etpb.Node) []byte { return encode(t, nodes...) }
	bad := func(n *etpb.Node, drop string) *etpb.Node {
		var keep []*etpb.AttributeProto
		for _, a := range n.Attr {
			if a.Name != drop {
				keep = append(keep, a)
			}
		}
		n.Attr = keep
		return n
	}
	ctrl := comp(2, 1)
	ctrl.CtrlDeps = []uint64{9}
	full := mk(comp(1, 1), comp(2, 1, 1))
	ar := etpb.CollectiveCommType_ALL_REDUCE
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"missing rank", map[string][]byte{"p.0.et": good, "p.2.et": good}, "p.1.et: rank 1 is missing: ranks must be 0..2"},
		{"no rank in name", map[string][]byte{"p.0.et": good, "p.x.et": good}, "p.x.et: no rank in the name"},
		{"empty", map[string][]byte{"p.0.et": nil}, "p.0.et: empty: no GlobalMetadata"},
		{"partial varint", map[string][]byte{"p.0.et": append(bytes.Clone(good), 0x80)}, "the file ends inside the length of message 2"},
		{"partial message", map[string][]byte{"p.0.et": full[:len(full)-2]}, "truncated: message 2 declares"},
		{"dangling data dep", map[string][]byte{"p.0.et": mk(comp(1, 1), comp(2, 1, 7))}, `p.0.et: node 2 ("nc"): data dependency on node 7, which is not in this rank's trace`},
		{"cycle", map[string][]byte{"p.0.et": mk(comp(1, 1, 3), comp(2, 1, 1), comp(3, 1, 2), comp(4, 1))}, "dependency cycle: "},
		{"self cycle", map[string][]byte{"p.0.et": mk(comp(5, 1, 5))}, `node 5 ("nf"): dependency cycle: 5 → 5`},
		{"duplicate id", map[string][]byte{"p.0.et": mk(comp(1, 1), comp(1, 2))}, `node 1 ("nb"): duplicate node id`},
		{"unknown type", map[string][]byte{"p.0.et": mk(pbNode(3, etpb.NodeType(42), 0, nil))}, `node 3 ("nd"): unknown node type 42`},
		{"invalid type", map[string][]byte{"p.0.et": mk(pbNode(3, etpb.NodeType_INVALID_NODE, 0, nil))}, "unsupported node type INVALID_NODE"},
		{"coll without type", map[string][]byte{"p.0.et": mk(bad(coll(1, ar, 8), "comm_type"))}, `node 1 ("nb"): collective without a type (comm_type)`},
		{"coll unknown type", map[string][]byte{"p.0.et": mk(coll(1, etpb.CollectiveCommType(99), 8))}, "unknown collective type 99"},
		{"coll without size", map[string][]byte{"p.0.et": mk(bad(coll(1, ar, 8), "comm_size"))}, "collective without a size (comm_size)"},
		{"send without peer", map[string][]byte{"p.0.et": mk(bad(send(1, 1, 0, 8), "comm_dst"))}, "send without a peer (comm_dst)"},
		{"recv without peer", map[string][]byte{"p.0.et": mk(bad(recv(1, 1, 0, 8), "comm_src"))}, "recv without a peer (comm_src)"},
		{"peer out of range", map[string][]byte{"p.0.et": mk(send(1, 5, 0, 8)), "p.1.et": good}, "send peer 5 is not another rank of 0..1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for name, b := range tc.files {
				f := filepath.Join(dir, name)
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			_, err := Load(files)
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("Load: %v, want an ErrorList", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load:\n%v\nwant it to say %q", err, tc.want)
			}
		})
	}
}

// TestMissingCtrlDep: a control dependency on a node the trace does not
// hold is counted and ignored (Chakra's feeder orders by data
// dependencies; PyTorch traces keep control edges to parents the
// converter left out).
func TestMissingCtrlDep(t *testing.T) {
	n := comp(2, 1, 1)
	n.CtrlDeps = []uint64{9}
	tr := traces(t, []*etpb.Node{comp(1, 1), n})
	if tr[0].MissingCtrl != 1 {
		t.Errorf("MissingCtrl %d, want 1", tr[0].MissingCtrl)
	}
	res, err := replay(t, tr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iteration != 2*us {
		t.Errorf("step %v, want 2µs (node 2 after node 1, its missing control parent ignored)", res.Iteration)
	}
}
