package graph

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/rocelab/rocelab/topologies"
)

func (e *gedge) label() string {
	rate := e.rate.String()
	if e.mixed {
		rate += "*"
	}
	if e.count > 1 {
		return fmt.Sprintf("%d × %s", e.count, rate)
	}
	return rate
}

// writeDOT writes a Graphviz digraph, tiers as ranks, hosts at the bottom.
func (g *graph) writeDOT(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "graph %q {\n  rankdir=BT;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9, dir=none];\n", g.t.Name)
	tiers := map[int][]string{}
	for _, b := range g.boxes {
		fill, color := hostFill, "#7f8c8d"
		switch {
		case b.kind == topologies.KindSwitch && b.plane == topologies.BE:
			fill, color = beSwitchFill, beColor
		case b.kind == topologies.KindSwitch || b.kind == topologies.KindStorage:
			fill, color = feSwitchFill, feColor
		}
		fmt.Fprintf(bw, "  %s [label=%q, fillcolor=%q, color=%q];\n", b.id, b.label()+"\n"+b.sub(), fill, color)
		tiers[b.tier] = append(tiers[b.tier], b.id)
	}
	for t := 0; t <= 3; t++ {
		if ids := tiers[t]; len(ids) > 0 {
			fmt.Fprintf(bw, "  { rank=same; %s; }\n", strings.Join(ids, "; "))
		}
	}
	for _, e := range g.edges {
		style := fmt.Sprintf("color=%q", beColor)
		if e.plane == topologies.FE {
			style = fmt.Sprintf("color=%q, style=dashed", feColor)
		}
		fmt.Fprintf(bw, "  %s -- %s [label=%q, %s];\n", e.a.id, e.b.id, e.label(), style)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeMermaid writes a Mermaid flowchart (bottom to top).
func (g *graph) writeMermaid(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("flowchart BT\n")
	for _, b := range g.boxes {
		text := strings.ReplaceAll(b.label()+"<br/>"+b.sub(), `"`, "'")
		class := "host"
		switch {
		case b.kind == topologies.KindSwitch && b.plane == topologies.BE:
			class = "be"
		case b.kind == topologies.KindSwitch:
			class = "fe"
		case b.kind == topologies.KindStorage:
			class = "storage"
		}
		fmt.Fprintf(bw, "  %s[\"%s\"]:::%s\n", b.id, text, class)
	}
	var be, fe []string
	for i, e := range g.edges {
		fmt.Fprintf(bw, "  %s ---|%s| %s\n", e.a.id, e.label(), e.b.id)
		if e.plane == topologies.BE {
			be = append(be, fmt.Sprint(i))
		} else {
			fe = append(fe, fmt.Sprint(i))
		}
	}
	if len(be) > 0 {
		fmt.Fprintf(bw, "  linkStyle %s stroke:%s,stroke-width:2px\n", strings.Join(be, ","), beColor)
	}
	if len(fe) > 0 {
		fmt.Fprintf(bw, "  linkStyle %s stroke:%s,stroke-width:1.5px,stroke-dasharray:5 3\n", strings.Join(fe, ","), feColor)
	}
	fmt.Fprintf(bw, "  classDef host fill:%s,stroke:#7f8c8d\n  classDef be fill:%s,stroke:%s\n  classDef fe fill:%s,stroke:%s\n  classDef storage fill:#eaf2f8,stroke:%s\n",
		hostFill, beSwitchFill, beColor, feSwitchFill, feColor, feColor)
	return bw.Flush()
}
