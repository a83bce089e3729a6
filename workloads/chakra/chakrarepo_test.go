package chakra

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestChakraRepoTrace reads Chakra's own test trace (tests/data in
// mlcommons/chakra at 21585d8, testdata/chakra-repo with its licence): a
// PyTorch execution trace converted by an early Chakra converter, 2.9 MB.
// It decodes whole and gives the facts Chakra's feeder tests
// (tests/feeder/tests.cpp) assert. It does not run: its collectives (c10d
// broadcasts and all-reduces) carry neither comm_type nor comm_size — that
// converter did not write them — and two nodes are each other's control
// child; validation names each.
func TestChakraRepoTrace(t *testing.T) {
	f, err := os.Open("testdata/chakra-repo/feeder_tests_trace.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var data []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(h.Name, "chakra.0.et") {
			if data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(data) != 2978371 {
		t.Fatalf("chakra.0.et: %d bytes, want 2978371", len(data))
	}
	trace, err := Read(strings.NewReader(string(data)), "chakra.0.et", 0)
	var el ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("err %v, want the collectives' missing attributes", err)
	}
	colls := 0
	for _, n := range trace.Nodes {
		if n.Kind == Coll {
			colls++
		}
	}
	kinds := map[string]int{}
	for _, e := range el {
		switch {
		case e.Node == nil:
			t.Errorf("not a node's: %v", e)
		case e.Msg == "collective without a size (comm_size)", e.Msg == "collective without a type (comm_type)":
			kinds[e.Msg]++
		case strings.HasPrefix(e.Msg, "dependency cycle: "):
			// aten::mul's two halves, each a control child of the other.
			kinds["cycle"]++
		default:
			t.Errorf("unexpected: %v", e)
		}
	}
	if kinds["cycle"] != 1 || kinds["collective without a type (comm_type)"] == 0 || kinds["collective without a size (comm_size)"] == 0 {
		t.Errorf("errors by kind %v, want each kind, one cycle", kinds)
	}
	if trace.MissingCtrl == 0 {
		t.Error("no control dependency on an absent node counted")
	}
	t.Logf("%d nodes, %d collectives, %d errors %v, %d control dependencies on absent nodes", len(trace.Nodes), colls, len(el), kinds, trace.MissingCtrl)

	// The feeder's first two issuable nodes (it orders by data
	// dependencies): 216 (a CPU compute node, rf_id 2) and 432 (a
	// collective, rf_id 110); 216's children start 217, 430, 435.
	var ready []uint64
	for _, n := range trace.Nodes {
		if len(n.DataDeps) == 0 {
			ready = append(ready, n.ID)
		}
	}
	slices.Sort(ready)
	if len(ready) < 2 || ready[0] != 216 || ready[1] != 432 {
		t.Fatalf("first issuable nodes %v, want 216, 432", ready[:min(len(ready), 4)])
	}
	rfID := func(n *Node) int64 {
		v, _ := attrInt(attrs(n.Raw)["rf_id"])
		return v
	}
	n216, n432 := trace.Node(216), trace.Node(432)
	if n216.Kind != Compute || !n216.CPUOp || rfID(n216) != 2 {
		t.Errorf("node 216: %v cpu %v rf_id %d, want compute, true, 2", n216.Kind, n216.CPUOp, rfID(n216))
	}
	if n432.Kind != Coll || rfID(n432) != 110 {
		t.Errorf("node 432: %v rf_id %d, want collective, 110", n432.Kind, rfID(n432))
	}
	var children []uint64
	for _, n := range trace.Nodes {
		if slices.Contains(n.DataDeps, 216) {
			children = append(children, n.ID)
		}
	}
	slices.Sort(children)
	if len(children) < 3 || !slices.Equal(children[:3], []uint64{217, 430, 435}) {
		t.Errorf("children of 216 %v, want 217, 430, 435 first", children)
	}
}
