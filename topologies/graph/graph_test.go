package graph

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

var graphOut = flag.String("graph-out", "", "write the SVG of every built-in topology into this directory")

func TestGraph(t *testing.T) {
	for _, name := range topologies.BuiltinNames() {
		topo, err := topologies.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"svg", "dot", "mermaid"} {
			var b bytes.Buffer
			if err := Write(&b, topo, format, Options{}); err != nil {
				t.Fatalf("%s %s: %v", name, format, err)
			}
			out := b.String()
			switch format {
			case "svg":
				dec := xml.NewDecoder(&b)
				for {
					if _, err := dec.Token(); err == io.EOF {
						break
					} else if err != nil {
						t.Fatalf("%s: SVG is not well-formed XML: %v", name, err)
					}
				}
				if *graphOut != "" {
					os.WriteFile(*graphOut+"/"+name+".svg", []byte(out), 0o644)
				}
			case "dot":
				if !strings.HasPrefix(out, "graph ") || !strings.Contains(out, "rank=same") {
					t.Errorf("%s: bad dot output", name)
				}
			case "mermaid":
				if !strings.HasPrefix(out, "flowchart BT") {
					t.Errorf("%s: bad mermaid output", name)
				}
			}
		}
	}
	if err := Write(io.Discard, &topologies.Topology{}, "png", Options{}); err == nil {
		t.Error("format png accepted")
	}
}

func TestGraphCompact(t *testing.T) {
	topo, err := topologies.Builtin("ai-zone-64")
	if err != nil {
		t.Fatal(err)
	}
	compact := buildGraph(topo, Options{})
	full := buildGraph(topo, Options{Full: true})
	if len(full.boxes) != len(topo.Nodes) {
		t.Errorf("full graph: %d boxes for %d nodes", len(full.boxes), len(topo.Nodes))
	}
	if len(compact.boxes) > 40 {
		t.Errorf("compact graph of 64 hosts has %d boxes", len(compact.boxes))
	}
	members, links := 0, 0
	for _, b := range compact.boxes {
		members += len(b.members)
	}
	for _, e := range compact.edges {
		links += e.count
	}
	if members != len(topo.Nodes) || links != len(topo.Links) {
		t.Errorf("compact graph covers %d nodes, %d links; want %d, %d", members, links, len(topo.Nodes), len(topo.Links))
	}
}
