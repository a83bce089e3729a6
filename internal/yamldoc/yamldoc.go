// Package yamldoc reads the one YAML document of a rocelab file (a topology
// or a scenario) into a node tree, so that every later error can name the
// line and column it is about. Syntax errors come back with the line
// yaml.v3 reports, made 1-based where yaml.v3 gives a 0-based one; an empty
// file and a file with a second document are errors too (a second document
// would otherwise be silently ignored).
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/rocelab/rocelab/internal/readcap"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem with the YAML text itself, at a 1-based line and column.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse returns the top node of the single YAML document in data, aliases
// resolved. what names the file's kind in messages ("topology",
// "scenario").
func Parse(data []byte, what string) (*yaml.Node, *Error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Line: 1, Col: 1, Msg: "empty " + what + " file"}
		}
		return nil, syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Line: 1, Col: 1, Msg: "empty " + what + " file"}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(err)
	default:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		return nil, &Error{Line: max(line, 1), Col: 1,
			Msg: "a second YAML document: a " + what + " file holds one (remove the '---' and what follows, or split the file)"}
	}
	return Resolve(doc.Content[0]), nil
}

func syntaxError(err error) *Error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if strings.HasPrefix(m[2], "did not find expected") {
			line++ // yaml.v3 reports these at a 0-based line
		}
		return &Error{Line: line, Col: 1, Msg: "YAML syntax: " + m[2]}
	}
	return &Error{Line: 1, Col: 1, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// Resolve follows aliases to the node they name.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is an empty or null scalar.
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// KindName describes n for an error message: "a mapping", "a list",
// "nothing", or the quoted scalar.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// Load reads the file at path and hands its text to parse, with the path as
// the name errors carry; what names the file's kind in a read error.
func Load[T any](path, what string, parse func(name string, data []byte) (T, error)) (T, error) {
	data, err := readcap.ReadFile(path, readcap.Config, what)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	return parse(path, data)
}
