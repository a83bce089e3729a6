package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// resolveTopology resolves the topology key v: a built-in name, a file
// path (relative to the scenario's directory), or an inline mapping.
// Without one the scenario runs on topologies.DefaultTopology.
func resolveTopology(e *errs, file string, v, key, top *yaml.Node) (string, *topologies.Topology) {
	if v == nil {
		t, err := topologies.Builtin(topologies.DefaultTopology)
		if err != nil {
			e.add(posOf(top), "default topology: %v", err)
			return "", nil
		}
		return topologies.DefaultTopology, t
	}
	var (
		t   *topologies.Topology
		err error
		ref string
	)
	switch {
	case v.Kind == yaml.MappingNode:
		ref = "inline"
		t, err = topologies.Parse(file, inlineText(e.lines, v, key, top))
	case v.Kind == yaml.ScalarNode && !yamldoc.IsNull(v) && v.Value != "":
		ref = v.Value
		if isPath(ref) {
			path := ref
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), path)
			}
			if _, serr := os.Stat(path); serr != nil {
				e.add(posOf(v), "topology: no file %s", path)
				return ref, nil
			}
			t, err = topologies.Load(path)
		} else {
			if !slices.Contains(topologies.BuiltinNames(), strings.TrimSuffix(ref, ".yaml")) {
				e.add(posOf(v), "topology: no built-in topology %q%s; give a file path (with .yaml) or an inline mapping",
					ref, suggest(ref, topologies.BuiltinNames()))
				return ref, nil
			}
			t, err = topologies.Builtin(ref)
		}
	default:
		e.add(posOf(v), "topology: want a built-in name, a file path or a mapping, got %s", yamldoc.KindName(v))
		return "", nil
	}
	if err != nil {
		var l topologies.ErrorList
		if errors.As(err, &l) {
			if ref != "inline" {
				e.add(posOf(v), "topology %s does not validate (its errors follow)", ref)
			}
			e.merge(l)
		} else {
			e.add(posOf(v), "topology: %v", err)
		}
		return ref, nil
	}
	return ref, t
}

func isPath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.HasSuffix(s, ".yml") ||
		(strings.HasSuffix(s, ".yaml") && !slices.Contains(topologies.BuiltinNames(), strings.TrimSuffix(s, ".yaml")))
}

// inlineText returns the scenario text with everything but the inline
// topology mapping v blanked out, lines and columns kept: parsed alone, it
// is the topology, and its errors point into the scenario file.
func inlineText(lines []string, v, key, top *yaml.Node) []byte {
	startLine, startCol := v.Line, v.Column
	endLine := len(lines) + 1 // first line after the mapping
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i] == key && i+2 < len(top.Content) {
			endLine = top.Content[i+2].Line
		}
	}
	var b strings.Builder
	for i, l := range lines {
		ln := i + 1
		switch {
		case ln < startLine || ln >= endLine:
		case ln == startLine:
			r := []rune(l)
			if startCol-1 <= len(r) {
				b.WriteString(strings.Repeat(" ", startCol-1))
				b.WriteString(string(r[startCol-1:]))
			}
		default:
			b.WriteString(l)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
