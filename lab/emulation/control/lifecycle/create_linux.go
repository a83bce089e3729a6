package lifecycle

import (
	"fmt"
	"os/exec"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
)

// CreateNetns records and creates the namespace of node in lab l, brings
// its loopback up and tags it with the alias rocelab:<lab>:<node>:lo. It
// returns the namespace name.
func CreateNetns(l *state.Lab, node string) (string, error) {
	name := state.NetnsName(l.Name(), node)
	id, err := l.Intend(state.Object{Kind: state.KindNetns, Node: node, Name: name})
	if err != nil {
		return "", err
	}
	if err := netns.Create(name); err != nil {
		return "", err
	}
	if err := TagNetns(l.Name(), node, name); err != nil {
		return "", err
	}
	return name, l.Created(id, nil)
}

// TagNetns marks the namespace ns as node's of lab: its loopback gets the
// alias rocelab:<lab>:<node>:lo, which is how DestroyAll recognises a
// lab's namespace when its state file is gone.
func TagNetns(lab, node, ns string) error {
	h, err := netns.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetAlias(lo, state.IfAlias(lab, node, state.LoPort))
	}
	if err != nil {
		return fmt.Errorf("tag netns %s: %w", ns, err)
	}
	return nil
}

// Port names one end of a link in the topology.
type Port struct {
	Node, Port string
}

// CreateVeth records and creates the veth pair v between ports a and b
// (v.A is a's end). Ends without an alias get state.IfAlias.
func CreateVeth(l *state.Lab, v links.Veth, a, b Port) error {
	if v.A.Alias == "" {
		v.A.Alias = state.IfAlias(l.Name(), a.Node, a.Port)
	}
	if v.B.Alias == "" {
		v.B.Alias = state.IfAlias(l.Name(), b.Node, b.Port)
	}
	id, err := l.Intend(state.Object{
		Kind: state.KindVeth, Node: a.Node, Port: a.Port,
		Name: v.A.Name, NetNS: v.A.NetNS, Peer: v.B.Name, PeerNetNS: v.B.NetNS,
	})
	if err != nil {
		return err
	}
	if err := links.Create(v); err != nil {
		return err
	}
	return l.Created(id, nil)
}

// StartProcess records and starts cmd as the process of node, inside
// namespace ns, and records its PID and start time. The caller owns cmd
// (and should Wait on it if it stays around; a CLI that exits may not).
func StartProcess(l *state.Lab, node, ns string, cmd *exec.Cmd) (proc.Process, error) {
	id, err := l.Intend(state.Object{Kind: state.KindProcess, Node: node, NetNS: ns, Name: cmd.Path})
	if err != nil {
		return proc.Process{}, err
	}
	p, err := netns.Start(ns, cmd)
	if err != nil {
		return proc.Process{}, err
	}
	return p, l.Created(id, func(o *state.Object) { o.PID, o.StartTime = p.PID, p.StartTime })
}
