package topologies

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// end is one parsed end of a link spec.
type end struct {
	node, port string
	at         Pos
	n          *Node
}

func (e end) String() string {
	if e.port == "" {
		return e.node
	}
	return e.node + ":" + e.port
}

// parseLink splits "a:p -- b:q", positioning each end inside the string.
func parseLink(s string, at Pos) (a, b end, err error) {
	i := strings.Index(s, "--")
	if i < 0 || strings.Count(s, "--") > 1 {
		return a, b, fmt.Errorf("link %q: want \"node:port -- node:port\"", s)
	}
	parse := func(part string, off int) (end, error) {
		trimmed := strings.TrimLeft(part, " \t")
		off += len(part) - len(trimmed)
		trimmed = strings.TrimRight(trimmed, " \t")
		e := end{at: Pos{Line: at.Line, Col: at.Col + off}}
		if at.IsZero() {
			e.at = at
		}
		if trimmed == "" {
			return e, fmt.Errorf("link %q: missing end", s)
		}
		node, port, hasPort := strings.Cut(trimmed, ":")
		e.node, e.port = node, port
		if hasPort && port == "" {
			return e, fmt.Errorf("link end %q: empty port name", trimmed)
		}
		return e, nil
	}
	if a, err = parse(s[:i], 0); err != nil {
		return a, b, err
	}
	b, err = parse(s[i+2:], i+2)
	return a, b, err
}

var portNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_/.-]{0,15}$`)

// linkReq is one link to create (a spec with count expanded).
type linkReq struct {
	s     *LinkSpec
	a, b  end
	first bool // the first of a spec's count
}

func (r *resolver) resolveLinks(specs []*LinkSpec) {
	var reqs []linkReq
	explicit := map[*Node]map[string]bool{} // port names written for switches and storage
	for i, s := range specs {
		if s == nil { // "- " with nothing after it
			r.e.add(r.file.at(fmt.Sprintf("links.%d", i)), "links: item %d is empty: want \"node:port -- node:port\" or {link: …}", i+1)
			continue
		}
		at := s.at("link")
		if len(s.Endpoints) > 0 {
			at = s.at("endpoints")
			switch {
			case s.Link != "":
				r.e.add(at, "link: give link or endpoints, not both")
				continue
			case len(s.Endpoints) != 2:
				r.e.add(at, "endpoints: want the link's two ends, [\"node:port\", \"node:port\"]; got %d", len(s.Endpoints))
				continue
			}
			s.Link = s.Endpoints[0] + " -- " + s.Endpoints[1]
		}
		if s.Link == "" {
			r.e.add(s.At, "link: missing \"node:port -- node:port\"")
			continue
		}
		a, b, err := parseLink(s.Link, at)
		if err != nil {
			r.e.add(at, "%v", err)
			continue
		}
		ok := true
		for _, e := range []*end{&a, &b} {
			e.n = r.t.byName[e.node]
			if e.n == nil {
				r.e.add(e.at, "link end %s: no node %q", e, e.node)
				ok = false
				continue
			}
			if e.port != "" && e.n.Kind != KindHost {
				if !portNameRE.MatchString(e.port) {
					r.e.add(e.at, "link end %s: bad port name %q", e, e.port)
					ok = false
					continue
				}
				if explicit[e.n] == nil {
					explicit[e.n] = map[string]bool{}
				}
				explicit[e.n][e.port] = true
			}
		}
		if !ok {
			continue
		}
		if a.n == b.n {
			r.e.add(at, "link %q joins %s to itself", s.Link, a.node)
			continue
		}
		count := 1
		if s.Count != nil {
			count = *s.Count
			if count < 1 || count > maxPorts {
				r.e.add(s.at("count"), "count %d out of range 1..%d", count, maxPorts)
				continue
			}
			if count > 1 && (a.port != "" || b.port != "") {
				r.e.add(s.at("count"), "count %d needs ends without ports (ports are then taken in order)", count)
				continue
			}
		}
		for i := range count {
			reqs = append(reqs, linkReq{s: s, a: a, b: b, first: i == 0})
		}
	}

	used := map[*Port]*Link{}
	next := map[*Node]int{}
	for _, q := range reqs {
		pa := r.endPort(q.a, explicit, next)
		pb := r.endPort(q.b, explicit, next)
		r.mentioned[pa], r.mentioned[pb] = true, true
		if pa == nil || pb == nil {
			continue
		}
		bad := false
		for _, pe := range []struct {
			p *Port
			e end
		}{{pa, q.a}, {pb, q.b}} {
			if old := used[pe.p]; old != nil {
				where := ""
				if old.Pos.Line > 0 {
					where = fmt.Sprintf(" at line %d", old.Pos.Line)
				}
				r.e.add(pe.e.at, "port %s:%s already used by link %s -- %s%s", pe.p.Node.Name, pe.p.Name, old.AName, old.BName, where)
				bad = true
			}
		}
		if bad || !r.checkPlanes(q, pa, pb) {
			continue
		}
		l := r.newLink(q.s, pa, pb)
		used[pa], used[pb] = l, l
	}
	for n, limit := range r.portLimits() {
		if len(n.Ports) > limit {
			r.e.add(r.specOf[n].at("ports"), "switch %s: %d links but ports: %d", n.Name, len(n.Ports), limit)
		}
		if len(n.Ports) > maxPorts {
			r.e.add(n.Pos, "switch %s: %d ports, at most %d are supported", n.Name, len(n.Ports), maxPorts)
		}
	}
}

func (r *resolver) portLimits() map[*Node]int {
	m := map[*Node]int{}
	for _, n := range r.t.Nodes {
		if n.Kind != KindSwitch {
			continue
		}
		m[n] = maxPorts
		if s := r.specOf[n]; s != nil && s.Ports != nil {
			m[n] = *s.Ports
		}
	}
	return m
}

// endPort finds (or, on a switch, creates) the port of a link end.
func (r *resolver) endPort(e end, explicit map[*Node]map[string]bool, next map[*Node]int) *Port {
	n := e.n
	switch n.Kind {
	case KindHost, KindStorage:
		switch {
		case e.port != "":
			if p := n.Port(e.port); p != nil {
				return p
			}
			r.e.add(e.at, "link end %s: %s %s has no port %q (%s)", e, n.Kind, n.Name, e.port, portList(n))
		case n.Kind == KindHost:
			r.e.add(e.at, "link end %s: host port missing (gpu0..gpu%d or fe0)", e, n.GPUs-1)
		default: // a storage end without a port takes the next free NIC
			for _, p := range n.Ports {
				if p.Link == nil && !explicit[n][p.Name] {
					explicit[n] = setAdd(explicit[n], p.Name)
					return p
				}
			}
			r.e.add(e.at, "link end %s: storage %s has no free NIC (%s)", e, n.Name, portList(n))
		}
		return nil
	case KindSwitch:
		name := e.port
		if name == "" {
			for {
				next[n]++
				name = "p" + strconv.Itoa(next[n])
				if !explicit[n][name] {
					break
				}
			}
		} else if p := n.Port(name); p != nil {
			return p
		}
		if s := r.specOf[n]; s != nil && s.Ports != nil && e.port != "" {
			if k, err := strconv.Atoi(strings.TrimPrefix(name, "p")); err == nil && strings.HasPrefix(name, "p") && (k < 1 || k > *s.Ports) {
				r.e.add(e.at, "link end %s: switch %s has ports p1..p%d", e, n.Name, *s.Ports)
				return nil
			}
		}
		return r.addPort(n, name, n.Plane)
	}
	return nil // kind errors were reported with the node
}

func setAdd(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

func portList(n *Node) string {
	var names []string
	for _, p := range n.Ports {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "it has none"
	}
	if len(names) > 4 {
		return "ports " + names[0] + ".." + names[len(names)-2] + ", " + names[len(names)-1]
	}
	return "ports " + strings.Join(names, ", ")
}

func planeName(p Plane) string {
	if p == BE {
		return "back-end"
	}
	return "front-end"
}

// checkPlanes reports a link whose ends are on different planes.
func (r *resolver) checkPlanes(q linkReq, pa, pb *Port) bool {
	if pa.Plane == pb.Plane {
		return true
	}
	at := q.s.at("link")
	for _, pair := range [][2]*Port{{pa, pb}, {pb, pa}} {
		x, y := pair[0], pair[1]
		if x.Node.Kind == KindStorage && y.Node.Kind == KindSwitch {
			r.e.add(at, "storage %s is front-end only, but %s is a back-end switch (%s)", x.Node.Name, y.Node.Name, y.Node.Role)
			return false
		}
	}
	describe := func(p *Port) string {
		if p.Node.Kind == KindSwitch {
			return fmt.Sprintf("%s switch %s (%s)", planeName(p.Plane), p.Node.Name, p.Node.Role)
		}
		return fmt.Sprintf("%s NIC %s:%s", planeName(p.Plane), p.Node.Name, p.Name)
	}
	r.e.add(at, "link joins %s to %s", describe(pa), describe(pb))
	return false
}

func (r *resolver) newLink(s *LinkSpec, pa, pb *Port) *Link {
	v := r.withKeys(r.defaults[pa.Plane].linkValues, &s.Where, s.Rate, s.Delay, s.MTU)
	l := &Link{Index: len(r.t.Links) + 1, A: pa, B: pb, Plane: pa.Plane, Rate: v.rate, Delay: v.delay, MTU: v.mtu, Pos: s.At,
		AName: pa.Node.Name + ":" + pa.Name, BName: pb.Node.Name + ":" + pb.Name}
	for _, pp := range [][2]*Port{{pa, pb}, {pb, pa}} {
		p, peer := pp[0], pp[1]
		p.Link, p.Peer = l, peer
		p.PeerNode, p.PeerPort = peer.Node.Name, peer.Name
		p.Rate, p.Delay, p.MTU = l.Rate, l.Delay, l.MTU
	}
	r.t.Links = append(r.t.Links, l)
	return l
}
