package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// Endpoint patterns name NIC ports of hosts and storage nodes:
//
//	host1:gpu0           one port
//	host1                every port of the host on the workload's plane
//	                     (gpu0, gpu1, … on the back-end; fe0 on the front-end)
//	host[1-4]:gpu[0-1]   numeric ranges and lists in brackets, [1,3,5-7],
//	                     expanded left to right (host1:gpu0, host1:gpu1, …);
//	                     [01-08] keeps the zero padding
//	all                  every host port on the plane
//
// A scalar may hold several patterns separated by commas outside brackets;
// a YAML list holds one or more patterns per element.

const maxExpansion = 1 << 14

// item is one pattern's text and its byte offset in the scalar.
type item struct {
	text string
	off  int
}

// splitItems splits a scalar at commas outside brackets.
func splitItems(s string) []item {
	var out []item
	depth, start := 0, 0
	flush := func(end int) {
		raw := s[start:end]
		trimmed := strings.TrimLeft(raw, " \t")
		off := start + len(raw) - len(trimmed)
		out = append(out, item{strings.TrimRight(trimmed, " \t"), off})
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(s))
	return out
}

// expand expands the brackets of one pattern. On error it returns the byte
// offset of the fault within the pattern.
func expand(p string) ([]string, int, error) {
	out := []string{""}
	i := 0
	for i < len(p) {
		c := p[i]
		if c == ']' {
			return nil, i, fmt.Errorf("unmatched ]")
		}
		if c != '[' {
			for j := range out {
				out[j] += string(c)
			}
			i++
			continue
		}
		end := strings.IndexByte(p[i:], ']')
		if end < 0 {
			return nil, i, fmt.Errorf("unclosed [")
		}
		vals, off, err := rangeList(p[i+1 : i+end])
		if err != nil {
			return nil, i + 1 + off, err
		}
		if len(out)*len(vals) > maxExpansion {
			return nil, i, fmt.Errorf("pattern expands to more than %d names", maxExpansion)
		}
		next := make([]string, 0, len(out)*len(vals))
		for _, o := range out {
			for _, v := range vals {
				next = append(next, o+v)
			}
		}
		out = next
		i += end + 1
	}
	return out, 0, nil
}

// rangeList expands "1-3,7" into 1 2 3 7 (keeping the width of a
// zero-padded start).
func rangeList(s string) ([]string, int, error) {
	if s == "" {
		return nil, 0, fmt.Errorf("empty brackets: want a range like [1-8] or a list like [1,3]")
	}
	var out []string
	off := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, off, fmt.Errorf("bad number %q in brackets: want a range like [1-8] or a list like [1,3]", lo)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < 0 {
				return nil, off + len(lo) + 1, fmt.Errorf("bad number %q in brackets: want a range like [1-8]", hi)
			}
			if b < a {
				return nil, off, fmt.Errorf("range %s-%s runs backwards", lo, hi)
			}
		}
		if b-a >= maxExpansion {
			return nil, off, fmt.Errorf("range %s is too long", part)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		for v := a; v <= b; v++ {
			out = append(out, fmt.Sprintf("%0*d", width, v))
		}
		off += len(part) + 1
	}
	return out, 0, nil
}

// endpoints resolves a pattern value (scalar or list) into NIC ports of
// hosts and storage nodes on plane. what names the key in errors.
func (r *resolver) endpoints(n *yaml.Node, what string, plane topologies.Plane) []*topologies.Port {
	var scalars []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		scalars = []*yaml.Node{n}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			scalars = append(scalars, yamldoc.Resolve(c))
		}
		if len(scalars) == 0 {
			r.e.add(posOf(n), "%s: empty list", what)
		}
	default:
		r.e.add(posOf(n), "%s: want an endpoint like host1:gpu0, a pattern like \"host[1-4]:gpu0\", or a list, got %s", what, yamldoc.KindName(n))
		return nil
	}
	var out []*topologies.Port
	seen := map[*topologies.Port]bool{}
	for _, sn := range scalars {
		if sn.Kind != yaml.ScalarNode || yamldoc.IsNull(sn) || sn.Value == "" {
			r.e.add(posOf(sn), "%s: want an endpoint like host1:gpu0, got %s", what, yamldoc.KindName(sn))
			continue
		}
		for _, it := range splitItems(sn.Value) {
			if it.text == "" {
				r.e.add(r.e.at(sn, it.off), "%s: empty endpoint", what)
				continue
			}
			names, off, err := expand(it.text)
			if err != nil {
				r.e.add(r.e.at(sn, it.off+off), "%s: bad pattern %q: %v", what, it.text, err)
				continue
			}
			for _, name := range names {
				ports, at, err := r.lookupEndpoint(name, plane)
				if err != nil {
					if name != it.text {
						at = 0 // the name was expanded: point at the pattern
					}
					r.e.add(r.e.at(sn, it.off+at), "%s: %v", what, err)
					break // one error per pattern
				}
				for _, p := range ports {
					if seen[p] {
						r.e.add(r.e.at(sn, it.off), "%s: %s:%s is listed twice", what, p.Node.Name, p.Name)
						continue
					}
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// lookupEndpoint resolves one expanded name: all, node, or node:port. An
// error comes with the byte offset in name it is about.
func (r *resolver) lookupEndpoint(name string, plane topologies.Plane) ([]*topologies.Port, int, error) {
	ports, err := r.lookupEndpointNode(name, plane)
	if err != nil {
		if _, ok := err.(portError); ok {
			return nil, strings.IndexByte(name, ':') + 1, err
		}
	}
	return ports, 0, err
}

// portError is an error about the port part of node:port.
type portError struct{ error }

func (r *resolver) lookupEndpointNode(name string, plane topologies.Plane) ([]*topologies.Port, error) {
	if name == "all" {
		var out []*topologies.Port
		for _, n := range r.t.Nodes {
			if n.Kind == topologies.KindHost {
				out = append(out, planePorts(n, plane)...)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("topology %s has no host ports on the %s", r.t.Name, planeName(plane))
		}
		return out, nil
	}
	nodeName, portName, hasPort := strings.Cut(name, ":")
	n, err := r.node(nodeName)
	if err != nil {
		return nil, err
	}
	if n.Kind == topologies.KindSwitch {
		return nil, fmt.Errorf("%s is a switch; workloads run between hosts and storage nodes", n.Name)
	}
	if !hasPort {
		ps := planePorts(n, plane)
		if len(ps) == 0 {
			return nil, fmt.Errorf("%s has no ports on the %s", n.Name, planeName(plane))
		}
		return ps, nil
	}
	p, err := port(n, portName)
	if err != nil {
		return nil, portError{err}
	}
	if p.Plane != plane {
		return nil, fmt.Errorf("%s:%s is on the %s; this workload runs on the %s", n.Name, p.Name, planeName(p.Plane), planeName(plane))
	}
	return []*topologies.Port{p}, nil
}

// node returns the topology's node called name, or an error suggesting one.
func (r *resolver) node(name string) (*topologies.Node, error) {
	if n := r.t.Node(name); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("no node %q in topology %s%s", name, r.t.Name, suggestNode(r.t, name))
}

func suggestNode(t *topologies.Topology, name string) string {
	var names []string
	for _, n := range t.Nodes {
		names = append(names, n.Name)
	}
	if m := closest(name, names); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// port returns n's port called name, or an error listing its ports.
func port(n *topologies.Node, name string) (*topologies.Port, error) {
	if p := n.Port(name); p != nil {
		return p, nil
	}
	var names []string
	for _, p := range n.Ports {
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("%s has no port %q (ports: %s)", n.Name, name, strings.Join(names, ", "))
}

// planePorts returns n's ports on plane.
func planePorts(n *topologies.Node, plane topologies.Plane) []*topologies.Port {
	var out []*topologies.Port
	for _, p := range n.Ports {
		if p.Plane == plane {
			out = append(out, p)
		}
	}
	return out
}

func planeName(p topologies.Plane) string {
	if p == topologies.FE {
		return "front-end"
	}
	return "back-end"
}

// PortName formats a port as node:port.
func PortName(p *topologies.Port) string { return p.Node.Name + ":" + p.Name }

// PortNames returns the PortName of each of ports, in order.
func PortNames(ports []*topologies.Port) []string {
	out := make([]string, len(ports))
	for i, p := range ports {
		out[i] = PortName(p)
	}
	return out
}
