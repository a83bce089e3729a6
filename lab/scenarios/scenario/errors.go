package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/topologies"
)

// errs collects the errors of one scenario file as topologies.Errors.
type errs struct {
	file  string
	lines []string // the file's lines, to place offsets inside scalars
	list  topologies.ErrorList
}

func (e *errs) add(p topologies.Pos, format string, args ...any) {
	e.list = append(e.list, &topologies.Error{File: e.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// merge appends errors of another file (a referenced topology).
func (e *errs) merge(l topologies.ErrorList) { e.list = append(e.list, l...) }

// err returns the errors sorted by file order and position, or nil.
func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	l := slices.Clone(e.list)
	slices.SortStableFunc(l, func(a, b *topologies.Error) int {
		// Errors of this file first, then those of referenced files.
		if (a.File == e.file) != (b.File == e.file) {
			if a.File == e.file {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(l, func(a, b *topologies.Error) bool { return *a == *b })
}

func posOf(n *yaml.Node) topologies.Pos {
	if n == nil {
		return topologies.Pos{}
	}
	return topologies.Pos{Line: n.Line, Col: n.Column}
}

// at returns the position of byte offset off of scalar n's value in the
// file: exact when the scalar is written on one line as is (plain, or
// quoted without escapes), else the position of the scalar.
func (e *errs) at(n *yaml.Node, off int) topologies.Pos {
	p := posOf(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Line < 1 || n.Line > len(e.lines) || off < 0 || off > len(n.Value) {
		return p
	}
	if strings.ContainsAny(n.Value, "\n") {
		return p
	}
	start := n.Column - 1 // runes before the scalar
	switch n.Style {
	case 0, yaml.FlowStyle:
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		start++
	default:
		return p
	}
	line := []rune(e.lines[n.Line-1])
	val := []rune(n.Value)
	if start+len(val) > len(line) || string(line[start:start+len(val)]) != n.Value {
		return p
	}
	return topologies.Pos{Line: n.Line, Col: start + 1 + utf8.RuneCountInString(n.Value[:off])}
}

// suggest returns ` (did you mean "x"?)` for the closest of known, or a
// list of them when none is close. (topologies has the same, unexported.)
func suggest(s string, known []string) string {
	if m := closest(s, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	if len(known) > 12 {
		return ""
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
}

// closest returns the element of known nearest to s, if it is near
// enough to be a typo.
func closest(s string, known []string) string { return topologies.Closest(s, known) }
