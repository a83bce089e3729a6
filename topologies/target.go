package topologies

import (
	"fmt"
	"strings"
)

// A fault target names where a fault sits, in one grammar for the CLI
// (`rocelab fault add TARGET …`) and scenario files (`target:`):
//
//	node:port     the egress of that port (toward its peer)
//	node          the egress of every linked port of the node
//	A to B        every link direction from A to B (all parallel links);
//	A->B          the same; A and B are nodes or node:port ends
//	A and B       both directions of every link between A and B;
//	A<->B, A--B   the same
//
// The word forms need no quoting in a shell ('A->B' must be quoted: the
// shell reads > as a redirection).

// Direction is one direction of a link: frames leaving From toward To.
type Direction struct {
	From, To *Port
}

// String formats d as node:port->node:port.
func (d Direction) String() string {
	return d.From.Node.Name + ":" + d.From.Name + "->" + d.To.Node.Name + ":" + d.To.Name
}

// Target is a resolved fault target.
type Target struct {
	// Text is the target as written.
	Text string
	// Node is the node of a whole-node target ("node"), else nil.
	Node *Node
	// Link is true for the two-ended forms (A to B, A and B).
	Link bool
	// Directions are the link directions the target covers: one per
	// linked port of a node or port target, one per parallel link (two
	// for A and B) of a link target.
	Directions []Direction
}

// TargetError is a target that does not resolve; Offset is where in the
// target's text the mistake is (0 for the whole target).
type TargetError struct {
	Offset int
	Err    error
}

func (e *TargetError) Error() string { return e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// targetSeps are the two-ended forms' separators, both-ways first.
var targetSeps = []struct {
	sep  string
	both bool
}{{" and ", true}, {" to ", false}, {"<->", true}, {"--", true}, {"->", false}}

// ResolveTarget resolves s (see the grammar above) against t.
func (t *Topology) ResolveTarget(s string) (Target, error) {
	tg := Target{Text: s}
	for _, sp := range targetSeps {
		i := strings.Index(s, sp.sep)
		if i < 0 {
			continue
		}
		tg.Link = true
		a, b := s[:i], s[i+len(sp.sep):]
		offB := i + len(sp.sep) + len(b) - len(strings.TrimLeft(b, " "))
		na, pa, err := t.targetEnd(strings.TrimSpace(a))
		if err != nil {
			return tg, &TargetError{0, err}
		}
		nb, pb, err := t.targetEnd(strings.TrimSpace(b))
		if err != nil {
			return tg, &TargetError{offB, err}
		}
		for _, p := range na.Ports {
			if p.Peer == nil || p.Peer.Node != nb || (pa != nil && p != pa) || (pb != nil && p.Peer != pb) {
				continue
			}
			tg.Directions = append(tg.Directions, Direction{p, p.Peer})
			if sp.both {
				tg.Directions = append(tg.Directions, Direction{p.Peer, p})
			}
		}
		if len(tg.Directions) == 0 {
			return tg, &TargetError{0, fmt.Errorf("no link between %s and %s", strings.TrimSpace(a), strings.TrimSpace(b))}
		}
		return tg, nil
	}
	n, p, err := t.targetEnd(strings.TrimSpace(s))
	if err != nil {
		off := 0
		if name, _, hasPort := strings.Cut(s, ":"); hasPort && t.Node(name) != nil {
			off = len(name) + 1
		}
		return tg, &TargetError{off, err}
	}
	if p != nil {
		if p.Peer == nil {
			return tg, &TargetError{0, fmt.Errorf("%s is not linked", s)}
		}
		tg.Directions = []Direction{{p, p.Peer}}
		return tg, nil
	}
	tg.Node = n
	for _, p := range n.Ports {
		if p.Peer != nil {
			tg.Directions = append(tg.Directions, Direction{p, p.Peer})
		}
	}
	if len(tg.Directions) == 0 {
		return tg, &TargetError{0, fmt.Errorf("%s has no linked port", n.Name)}
	}
	return tg, nil
}

// targetEnd resolves one end: node or node:port (port nil for a node).
func (t *Topology) targetEnd(s string) (*Node, *Port, error) {
	if s == "" {
		return nil, nil, fmt.Errorf("empty target end (want node or node:port)")
	}
	name, portName, hasPort := strings.Cut(s, ":")
	n := t.Node(name)
	if n == nil {
		var names []string
		for _, n := range t.Nodes {
			names = append(names, n.Name)
		}
		hint := ""
		if m := Closest(name, names); m != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", m)
		}
		return nil, nil, fmt.Errorf("no node %q in topology %s%s", name, t.Name, hint)
	}
	if !hasPort {
		return n, nil, nil
	}
	p := n.Port(portName)
	if p == nil {
		var names []string
		for _, p := range n.Ports {
			names = append(names, p.Name)
		}
		return nil, nil, fmt.Errorf("%s has no port %q (ports: %s)", n.Name, portName, strings.Join(names, ", "))
	}
	return n, p, nil
}
