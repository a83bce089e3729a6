package topologies

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// WriteExplicit writes nodes and links (a generator's output) as an explicit
// topology file: one node and one link a line, in order, so the file
// resolves exactly as the generator block would. comment lines go on top.
func WriteExplicit(w io.Writer, name, description string, comment []string, nodes []*NodeSpec, links []*LinkSpec) error {
	bw := bufio.NewWriter(w)
	for _, c := range comment {
		fmt.Fprintf(bw, "# %s\n", c)
	}
	fmt.Fprintf(bw, "name: %s\n", name)
	if description != "" {
		fmt.Fprintf(bw, "description: %s\n", strconv.Quote(description))
	}
	width := 0
	for _, n := range nodes {
		width = max(width, len(n.Name))
	}
	bw.WriteString("nodes:\n")
	for _, n := range nodes {
		fmt.Fprintf(bw, "  %-*s {%s}\n", width+1, n.Name+":", strings.Join(nodeFields(n), ", "))
	}
	bw.WriteString("links:\n")
	for _, l := range links {
		attrs := linkAttrs(l)
		if len(attrs) == 0 {
			fmt.Fprintf(bw, "  - %s\n", l.Link)
			continue
		}
		fmt.Fprintf(bw, "  - {link: %s, %s}\n", l.Link, strings.Join(attrs, ", "))
	}
	return bw.Flush()
}

func nodeFields(n *NodeSpec) []string {
	f := []string{"kind: " + n.Kind}
	if n.Role != "" {
		f = append(f, "role: "+n.Role)
	}
	if n.GPUs != nil {
		f = append(f, fmt.Sprintf("gpus: %d", *n.GPUs))
	}
	if n.Frontend != nil {
		f = append(f, fmt.Sprintf("frontend: %t", *n.Frontend))
	}
	if n.NICs != nil {
		f = append(f, fmt.Sprintf("nics: %d", *n.NICs))
	}
	if n.Profile != "" {
		f = append(f, "profile: "+n.Profile)
	}
	if n.Ports != nil {
		f = append(f, fmt.Sprintf("ports: %d", *n.Ports))
	}
	if n.Zone != 0 {
		f = append(f, fmt.Sprintf("zone: %d", n.Zone))
	}
	if n.Rack != 0 {
		f = append(f, fmt.Sprintf("rack: %d", n.Rack))
	}
	if n.Machine != "" {
		f = append(f, "machine: "+n.Machine)
	}
	return f
}

func linkAttrs(l *LinkSpec) []string {
	var a []string
	if l.Rate != nil {
		a = append(a, "rate: "+clock.Rate(*l.Rate).String())
	}
	if l.Delay != nil {
		a = append(a, "delay: "+clock.Duration(*l.Delay).String())
	}
	if l.MTU != nil {
		a = append(a, fmt.Sprintf("mtu: %d", int64(*l.MTU)))
	}
	if l.Count != nil {
		a = append(a, fmt.Sprintf("count: %d", *l.Count))
	}
	return a
}
