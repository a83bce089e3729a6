package topologies

import (
	"embed"
	"fmt"
	"go.yaml.in/yaml/v3"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/rocelab/rocelab/internal/yamldoc"
)

//go:embed *.yaml
var shipped embed.FS

// Builtin returns the shipped topology called name (laptop, incast,
// ai-zone-64, two-zones; a .yaml suffix is allowed), resolved.
func Builtin(name string) (*Topology, error) {
	data, err := BuiltinFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(strings.TrimSuffix(name, ".yaml")+".yaml", data)
}

// BuiltinFile returns the text of a shipped topology.
func BuiltinFile(name string) ([]byte, error) {
	name = strings.TrimSuffix(name, ".yaml")
	data, err := shipped.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in topology %q (have %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return data, nil
}

// BuiltinNames lists the shipped topologies.
func BuiltinNames() []string {
	entries, _ := fs.ReadDir(shipped, ".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// DefaultTopology is the built-in used when no topology is given.
const DefaultTopology = "laptop"

// Load reads and resolves the topology file at path. A file that does not
// validate gives an ErrorList.
func Load(path string) (*Topology, error) {
	return yamldoc.Load(path, "topology", Parse)
}

// Parse resolves the topology text data; name is the file name used in
// error messages and, without its extension, the default topology name.
// The addressing plan is computed for a lab named like the topology; call
// Topology.Address to re-plan it for another lab name.
func Parse(name string, data []byte) (*Topology, error) {
	e := &errs{file: name}
	f := decodeFile(e, data)
	if f == nil {
		return nil, e.err()
	}
	if f.Name == "" {
		f.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".yaml"), ".yml")
	}
	r := &resolver{e: e, file: f}
	t := r.resolve()
	if err := e.err(); err != nil {
		return nil, err
	}
	t.Source, t.text = name, data
	return t, nil
}

// ParseFile decodes data into the spec types without resolving them
// (generators and tools that rewrite files use it).
func ParseFile(name string, data []byte) (*File, error) {
	e := &errs{file: name}
	f := decodeFile(e, data)
	return f, e.err()
}

func decodeFile(e *errs, data []byte) *File {
	top, yerr := yamldoc.Parse(data, "topology")
	if yerr != nil {
		e.add(Pos{Line: yerr.Line, Col: yerr.Col}, "%s", yerr.Msg)
		return nil
	}
	if !checkCounts(e, top) {
		return nil
	}
	f := &File{}
	d := &decoder{e: e}
	d.decodeStruct(top, reflectValue(f), "topology")
	return f
}

// maxLinks bounds a file's explicit links (a 65,535-node fabric has far
// fewer).
const maxLinks = 1 << 20

// checkCounts refuses a file with more nodes or links than a topology may
// have before anything is decoded: a million-node file took minutes and
// gigabytes to be told so after resolving.
func checkCounts(e *errs, top *yaml.Node) bool {
	if top.Kind != yaml.MappingNode {
		return true
	}
	ok := true
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch {
		case k.Value == "nodes" && v.Kind == yaml.MappingNode && len(v.Content)/2 > maxNodes:
			e.add(Pos{Line: k.Line, Col: k.Column}, "%d nodes: at most %d are supported", len(v.Content)/2, maxNodes)
			ok = false
		case k.Value == "links" && v.Kind == yaml.SequenceNode && len(v.Content) > maxLinks:
			e.add(Pos{Line: k.Line, Col: k.Column}, "%d links: at most %d are supported", len(v.Content), maxLinks)
			ok = false
		}
	}
	return ok
}
