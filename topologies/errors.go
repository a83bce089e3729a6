package topologies

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Pos is a position in a topology file, 1-based. The zero Pos means
// "unknown" (a value produced by a generator rather than written).
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

// IsZero reports whether p is unknown.
func (p Pos) IsZero() bool { return p.Line == 0 }

// or returns p, or fallback when p is unknown.
func (p Pos) or(fallback Pos) Pos {
	if p.IsZero() {
		return fallback
	}
	return p
}

// Error is one problem in a topology file.
type Error struct {
	File string `json:"file"`
	Pos
	Msg string `json:"message"`
}

// Error formats e as FILE:LINE:COL: message.
func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ErrorList is every problem found in a topology file, sorted by position.
// Load and Parse return it (as an error) when a file does not validate;
// callers detect it with errors.As.
type ErrorList []*Error

// Error joins the errors, one a line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// sort orders l by position and drops exact duplicates.
func (l ErrorList) sort() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(l, func(a, b *Error) bool { return *a == *b })
}

// errs collects errors for one file.
type errs struct {
	file string
	list ErrorList
}

func (e *errs) add(p Pos, format string, args ...any) {
	e.list = append(e.list, &Error{File: e.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return e.list.sort()
}
