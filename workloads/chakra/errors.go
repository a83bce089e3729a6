package chakra

import (
	"fmt"
	"strings"
)

// Error is one problem in a trace. Node is set when the problem is a
// node's; Offset (bytes into File) when it is the framing's.
type Error struct {
	File   string   `json:"file"`
	Rank   int      `json:"rank"`
	Node   *NodeRef `json:"node,omitempty"`
	Offset int64    `json:"offset,omitempty"`
	Msg    string   `json:"message"`
}

// NodeRef names a node in messages: its id and name.
type NodeRef struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
}

func (r NodeRef) String() string { return fmt.Sprintf("node %d (%q)", r.ID, r.Name) }

// Error formats e as FILE: node ID ("NAME"): message, or FILE: offset N:
// message for a framing problem.
func (e *Error) Error() string {
	switch {
	case e.Node != nil:
		return fmt.Sprintf("%s: %s: %s", e.File, e.Node, e.Msg)
	case e.Offset > 0:
		return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return e.Msg
}

// ErrorList is every problem found in a set of trace files, in file order.
// Load and LoadDir return it (as an error) when the traces do not validate;
// callers detect it with errors.As (a CLI exits 2 on it).
type ErrorList []*Error

// Error joins the errors, one a line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// err returns l as an error, nil when empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
