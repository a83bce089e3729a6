// Package graph draws a topology: SVG, Graphviz DOT and Mermaid pictures
// (`rocelab graph`), compact for large fabrics (a rack of alike hosts as one
// box, long rows elided), and the same drawing's geometry (Layout) for the
// live web view and report replays to colour.
package graph

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/topologies"

	"github.com/rocelab/rocelab/core/clock"
)

// Options tune Write.
type Options struct {
	// Full draws every node even for large topologies. By default, with
	// more than CompactHosts hosts, hosts with the same neighbours (a rack,
	// a rail group) are drawn as one box; and a row of more than CompactRow
	// boxes (CompactRowFE in the front-end) shows its first three and last
	// two (two and one), the middle elided into one box.
	Full bool
}

// Thresholds of the compact drawing.
const (
	CompactHosts = 8
	CompactRow   = 8
	CompactRowFE = 4
)

// Write draws t in format svg, dot or mermaid.
func Write(w io.Writer, t *topologies.Topology, format string, opts Options) error {
	g := buildGraph(t, opts)
	switch format {
	case "svg":
		return g.writeSVG(w)
	case "dot":
		return g.writeDOT(w)
	case "mermaid":
		return g.writeMermaid(w)
	}
	return fmt.Errorf("graph format %q: want svg, dot or mermaid", format)
}

// gbox is a drawn node: one node, or a group of alike nodes.
type gbox struct {
	id      string
	members []*topologies.Node
	kind    topologies.Kind
	role    topologies.Role
	tier    int
	plane   topologies.Plane // BE for hosts
	elided  int              // boxes merged into this one by row elision
	x, y    float64
	w, h    float64
}

func (b *gbox) first() *topologies.Node { return b.members[0] }

// label is the box's name: host1, or host1…host4 for a group.
func (b *gbox) label() string {
	if b.elided > 0 {
		return fmt.Sprintf("⋯ %d more", b.elided)
	}
	if len(b.members) == 1 {
		return b.first().Name
	}
	last := b.members[len(b.members)-1].Name
	return b.first().Name + "…" + trimCommonPrefix(b.first().Name, last)
}

func trimCommonPrefix(a, b string) string {
	// Keep the last name's numeric tail: host1…4, z1-host1…2.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	return b[i:]
}

// sub is the box's second line.
func (b *gbox) sub() string {
	n := len(b.members)
	switch b.kind {
	case topologies.KindHost:
		gpus := 0
		for _, m := range b.members {
			gpus += m.GPUs
		}
		if n == 1 {
			return fmt.Sprintf("%d GPU%s", gpus, plural(gpus))
		}
		return fmt.Sprintf("×%d · %d GPUs", n, gpus)
	case topologies.KindStorage:
		if n == 1 {
			return "storage"
		}
		return fmt.Sprintf("storage ×%d", n)
	}
	if n == 1 {
		return strings.ToUpper(string(b.role))
	}
	return fmt.Sprintf("%s ×%d", strings.ToUpper(string(b.role)), n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// gedge is one or more links between two boxes.
type gedge struct {
	a, b  *gbox // a is the lower tier
	count int
	rate  clock.Rate
	mixed bool // links of different rates
	plane topologies.Plane
}

type graph struct {
	t     *topologies.Topology
	boxes []*gbox
	edges []*gedge
	full  bool
}

func buildGraph(t *topologies.Topology, opts Options) *graph {
	g := &graph{t: t, full: opts.Full}
	hosts := 0
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindHost {
			hosts++
		}
	}
	// Hosts (and storage) with the same neighbours share a box.
	groups := map[string]*gbox{}
	for _, n := range t.Nodes {
		key := n.Name
		if !opts.Full && n.Kind == topologies.KindHost && hosts > CompactHosts {
			key = fmt.Sprintf("%s|%d|%s", n.Kind, n.GPUs, neighbours(n))
		}
		b := groups[key]
		if b == nil {
			b = &gbox{kind: n.Kind, role: n.Role, tier: n.Role.Tier(), plane: n.Plane}
			if n.Kind == topologies.KindHost {
				b.plane = topologies.BE
			}
			groups[key] = b
			g.boxes = append(g.boxes, b)
		}
		b.members = append(b.members, n)
	}
	// A row of more than CompactRow boxes keeps its first and last ones
	// and elides the middle into one box.
	if !opts.Full {
		rows := map[string][]*gbox{}
		var keys []string
		for _, b := range g.boxes {
			k := fmt.Sprintf("%s|%d|%s|%d", b.plane, b.tier, b.kind, b.first().Zone)
			if rows[k] == nil {
				keys = append(keys, k)
			}
			rows[k] = append(rows[k], b)
		}
		drop := map[*gbox]bool{}
		for _, k := range keys {
			row := rows[k]
			limit, head, tail := CompactRow, 3, 2
			if strings.HasPrefix(k, string(topologies.FE)) {
				limit, head, tail = CompactRowFE, 2, 1
			}
			if len(row) <= limit {
				continue
			}
			mid := row[head : len(row)-tail]
			e := mid[0]
			e.elided = len(mid)
			for _, b := range mid[1:] {
				e.members = append(e.members, b.members...)
				drop[b] = true
			}
		}
		g.boxes = slices.DeleteFunc(g.boxes, func(b *gbox) bool { return drop[b] })
	}
	boxOf := map[*topologies.Node]*gbox{}
	for i, b := range g.boxes {
		b.id = fmt.Sprintf("n%d", i+1)
		for _, m := range b.members {
			boxOf[m] = b
		}
	}
	edges := map[[2]*gbox]*gedge{}
	for _, l := range t.Links {
		a, b := boxOf[l.A.Node], boxOf[l.B.Node]
		if a.tier > b.tier || a.tier == b.tier && a.kind == topologies.KindSwitch && b.kind != topologies.KindSwitch {
			a, b = b, a
		}
		e := edges[[2]*gbox{a, b}]
		if e == nil {
			e = &gedge{a: a, b: b, rate: l.Rate, plane: l.Plane}
			edges[[2]*gbox{a, b}] = e
			g.edges = append(g.edges, e)
		}
		e.count++
		if l.Rate != e.rate {
			e.mixed = true
		}
	}
	return g
}

// neighbours is the sorted set of switches (or groupable switch layers) n links to.
func neighbours(n *topologies.Node) string {
	var s []string
	for _, p := range n.Ports {
		if p.Peer != nil {
			s = append(s, p.Peer.Node.Name)
		}
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ",")
}

// rows returns the boxes of one plane's tier, in node order.
func (g *graph) row(plane topologies.Plane, tier int, kinds ...topologies.Kind) []*gbox {
	var r []*gbox
	for _, b := range g.boxes {
		if b.tier == tier && b.plane == plane && slices.Contains(kinds, b.kind) {
			r = append(r, b)
		}
	}
	slices.SortStableFunc(r, func(x, y *gbox) int { return cmp.Compare(x.first().Index, y.first().Index) })
	return r
}

// layerSummary describes the links between two rows: "512 × 400G".
func (g *graph) layerSummary(lower, upper []*gbox) string {
	in := func(b *gbox, set []*gbox) bool { return slices.Contains(set, b) }
	count := 0
	rates := map[clock.Rate]int{}
	for _, e := range g.edges {
		if in(e.a, lower) && in(e.b, upper) || in(e.b, lower) && in(e.a, upper) {
			count += e.count
			rates[e.rate] += e.count
		}
	}
	if count == 0 {
		return ""
	}
	var parts []string
	for _, r := range sortedRates(rates) {
		parts = append(parts, fmt.Sprintf("%d × %v", rates[r], r))
	}
	return strings.Join(parts, " + ")
}

func sortedRates(m map[clock.Rate]int) []clock.Rate {
	var rs []clock.Rate
	for r := range m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}
