package chakra

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// Kind is what a node does, from its Chakra NodeType.
type Kind uint8

// Kinds of node.
const (
	Compute  Kind = iota + 1 // COMP_NODE: duration_micros on the compute stream
	MemLoad                  // MEM_LOAD_NODE
	MemStore                 // MEM_STORE_NODE
	Metadata                 // METADATA_NODE: completes at once
	Send                     // COMM_SEND_NODE
	Recv                     // COMM_RECV_NODE
	Coll                     // COMM_COLL_NODE
)

var kindNames = [...]string{Compute: "compute", MemLoad: "mem_load", MemStore: "mem_store", Metadata: "metadata", Send: "send", Recv: "recv", Coll: "collective"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText writes k by name, for JSON timelines.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Comm reports whether k is communication (a collective, send or receive).
func (k Kind) Comm() bool { return k == Send || k == Recv || k == Coll }

var kindOf = map[etpb.NodeType]Kind{
	etpb.NodeType_COMP_NODE:      Compute,
	etpb.NodeType_MEM_LOAD_NODE:  MemLoad,
	etpb.NodeType_MEM_STORE_NODE: MemStore,
	etpb.NodeType_METADATA_NODE:  Metadata,
	etpb.NodeType_COMM_SEND_NODE: Send,
	etpb.NodeType_COMM_RECV_NODE: Recv,
	etpb.NodeType_COMM_COLL_NODE: Coll,
}

// Node is one node of a rank's trace, with the attributes the replay uses
// decoded (the names Chakra's feeder reads: comm_type, comm_size, comm_src,
// comm_dst, comm_tag, pg_name).
type Node struct {
	ID       uint64
	Name     string
	Kind     Kind
	DataDeps []uint64
	CtrlDeps []uint64
	Duration clock.Duration // duration_micros

	// Compute: num_ops and tensor_size (what a roofline times it by, as
	// ASTRA-sim's does), and is_cpu_op (a CPU node keeps its duration).
	NumOps, TensorSize uint64
	CPUOp              bool

	CollType etpb.CollectiveCommType // Coll: comm_type
	Size     int64                   // Coll, Send, Recv: comm_size, bytes
	Group    string                  // Coll: pg_name, the process group ("" is a group too)
	Peer     int                     // Send: comm_dst; Recv: comm_src
	Tag      int64                   // Send, Recv: comm_tag (0 when absent)

	Raw *etpb.Node // the decoded message, for attributes not decoded here
}

// Ref returns the node's id and name.
func (n *Node) Ref() NodeRef { return NodeRef{ID: n.ID, Name: n.Name} }

// Trace is one rank's execution trace.
type Trace struct {
	File  string
	Rank  int
	Meta  *etpb.GlobalMetadata
	Nodes []*Node // in file order
	// MissingCtrl counts control dependencies on nodes the trace does not
	// hold, which the replay ignores (validate).
	MissingCtrl int
	index       map[uint64]int
}

// Node returns the node with id, or nil.
func (t *Trace) Node(id uint64) *Node {
	if i, ok := t.index[id]; ok {
		return t.Nodes[i]
	}
	return nil
}

// attrInt returns the integer value of attribute a, whichever integer field
// of the oneof holds it (the feeder reads comm_size from int64_val and
// comm_src from int32_val, but converters differ).
func attrInt(a *etpb.AttributeProto) (int64, bool) {
	switch v := a.GetValue().(type) {
	case *etpb.AttributeProto_Int32Val:
		return int64(v.Int32Val), true
	case *etpb.AttributeProto_Int64Val:
		return v.Int64Val, true
	case *etpb.AttributeProto_Uint32Val:
		return int64(v.Uint32Val), true
	case *etpb.AttributeProto_Uint64Val:
		return int64(v.Uint64Val), true
	case *etpb.AttributeProto_Sint32Val:
		return int64(v.Sint32Val), true
	case *etpb.AttributeProto_Sint64Val:
		return v.Sint64Val, true
	case *etpb.AttributeProto_Fixed32Val:
		return int64(v.Fixed32Val), true
	case *etpb.AttributeProto_Fixed64Val:
		return int64(v.Fixed64Val), true
	case *etpb.AttributeProto_Sfixed32Val:
		return int64(v.Sfixed32Val), true
	case *etpb.AttributeProto_Sfixed64Val:
		return v.Sfixed64Val, true
	}
	return 0, false
}

// attrs indexes a node's attributes by name (the last one wins, as in the
// feeder's loop).
func attrs(n *etpb.Node) map[string]*etpb.AttributeProto {
	m := make(map[string]*etpb.AttributeProto, len(n.GetAttr()))
	for _, a := range n.GetAttr() {
		m[a.GetName()] = a
	}
	return m
}

// convert turns a decoded message into a Node, reporting what a replay
// cannot use: an unknown or unsupported type, a collective without a known
// type or a size, a send or receive without a peer. Peers are checked
// against the number of ranks later (checkPeers).
func convert(pb *etpb.Node) (*Node, []string) {
	n := &Node{
		ID: pb.GetId(), Name: pb.GetName(),
		DataDeps: pb.GetDataDeps(), CtrlDeps: pb.GetCtrlDeps(),
		Duration: clock.Duration(pb.GetDurationMicros()) * clock.Microsecond,
		Raw:      pb,
	}
	t := pb.GetType()
	k, ok := kindOf[t]
	if !ok {
		if _, known := etpb.NodeType_name[int32(t)]; known {
			return n, []string{fmt.Sprintf("unsupported node type %s", t)}
		}
		return n, []string{fmt.Sprintf("unknown node type %d", int32(t))}
	}
	n.Kind = k
	at := attrs(pb)
	if k == Compute {
		if v, ok := attrInt(at["num_ops"]); ok && v > 0 {
			n.NumOps = uint64(v)
		}
		if v, ok := attrInt(at["tensor_size"]); ok && v > 0 {
			n.TensorSize = uint64(v)
		}
		if v, ok := attrInt(at["is_cpu_op"]); ok {
			n.CPUOp = v != 0
		} else if a := at["is_cpu_op"]; a != nil {
			n.CPUOp = a.GetBoolVal()
		}
	}
	if !k.Comm() {
		return n, nil
	}
	var bad []string
	integer := func(name string) (int64, bool) {
		a, ok := at[name]
		if !ok {
			return 0, false
		}
		v, ok := attrInt(a)
		if !ok {
			bad = append(bad, fmt.Sprintf("attribute %s is not an integer", name))
		}
		return v, ok
	}
	if v, ok := integer("comm_size"); ok {
		if v < 0 {
			bad = append(bad, fmt.Sprintf("negative comm_size %d", v))
		}
		n.Size = v
	} else if k == Coll && at["comm_size"] == nil {
		bad = append(bad, "collective without a size (comm_size)")
	}
	n.Tag, _ = integer("comm_tag")
	switch k {
	case Coll:
		v, ok := integer("comm_type")
		_, known := etpb.CollectiveCommType_name[int32(v)]
		switch {
		case !ok && at["comm_type"] == nil:
			bad = append(bad, "collective without a type (comm_type)")
		case ok && (!known || int64(int32(v)) != v):
			bad = append(bad, fmt.Sprintf("unknown collective type %d", v))
		}
		n.CollType = etpb.CollectiveCommType(v)
		n.Group = at["pg_name"].GetStringVal()
	case Send, Recv:
		name := "comm_dst"
		if k == Recv {
			name = "comm_src"
		}
		v, ok := integer(name)
		if !ok && at[name] == nil {
			bad = append(bad, fmt.Sprintf("%s without a peer (%s)", k, name))
		}
		n.Peer = int(v)
		if int64(n.Peer) != v {
			bad = append(bad, fmt.Sprintf("%s %d is out of range", name, v))
		}
	}
	return n, bad
}
