package chakra

import (
	"bytes"
	"testing"

	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// Builders of Chakra nodes for tests; durations in microseconds.

func pbNode(id uint64, typ etpb.NodeType, us uint64, deps []uint64, at ...*etpb.AttributeProto) *etpb.Node {
	return &etpb.Node{Id: id, Name: "n" + string(rune('a'+id%26)), Type: typ, DurationMicros: us, DataDeps: deps, Attr: at}
}

func comp(id, us uint64, deps ...uint64) *etpb.Node {
	return pbNode(id, etpb.NodeType_COMP_NODE, us, deps)
}

func i64(name string, v int64) *etpb.AttributeProto {
	return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_Int64Val{Int64Val: v}}
}

func i32(name string, v int32) *etpb.AttributeProto {
	return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_Int32Val{Int32Val: v}}
}

func str(name, v string) *etpb.AttributeProto {
	return &etpb.AttributeProto{Name: name, Value: &etpb.AttributeProto_StringVal{StringVal: v}}
}

func coll(id uint64, typ etpb.CollectiveCommType, size int64, deps ...uint64) *etpb.Node {
	return pbNode(id, etpb.NodeType_COMM_COLL_NODE, 0, deps, i64("comm_type", int64(typ)), i64("comm_size", size))
}

func send(id uint64, dst, tag int32, size int64, deps ...uint64) *etpb.Node {
	return pbNode(id, etpb.NodeType_COMM_SEND_NODE, 0, deps, i32("comm_dst", dst), i32("comm_tag", tag), i64("comm_size", size))
}

func recv(id uint64, src, tag int32, size int64, deps ...uint64) *etpb.Node {
	return pbNode(id, etpb.NodeType_COMM_RECV_NODE, 0, deps, i32("comm_src", src), i32("comm_tag", tag), i64("comm_size", size))
}

// encode frames a trace file as Chakra writes it: a GlobalMetadata, then
// the nodes, each preceded by its length as a varint.
func encode(t testing.TB, nodes ...*etpb.Node) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, nil, nodes); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// traces decodes one trace per rank from nodes.
func traces(t testing.TB, ranks ...[]*etpb.Node) []*Trace {
	t.Helper()
	var out []*Trace
	for r, nodes := range ranks {
		tr, err := Read(bytes.NewReader(encode(t, nodes...)), "t."+string(rune('0'+r))+".et", r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	if errs := checkPeers(out); len(errs) > 0 {
		t.Fatal(errs)
	}
	return out
}
