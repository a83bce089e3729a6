package deploy

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTableGroups: a GROUP column after PID when some node runs in a
// node group, none otherwise; with MACHINE, both in their places.
func TestWriteTableGroups(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
		head  string
		row   string // the first node's row
	}{
		{"no groups", []Node{{Name: "sw1", Kind: "switch", NetNS: "ns1", PID: 7}},
			"NODE KIND ROLE NETNS PID ADDRESSES INTERFACES", "sw1 switch - ns1 7 - -"},
		{"groups", []Node{{Name: "sw1", Kind: "switch", NetNS: "ns1", PID: 7, Group: "group1"}, {Name: "st1", Kind: "storage", NetNS: "ns2"}},
			"NODE KIND ROLE NETNS PID GROUP ADDRESSES INTERFACES", "sw1 switch - ns1 7 group1 - -"},
		{"groups and machines", []Node{{Name: "sw1", Kind: "switch", NetNS: "ns1", PID: 7, Group: "group2", Machine: "m1"}},
			"NODE KIND ROLE MACHINE NETNS PID GROUP ADDRESSES INTERFACES", "sw1 switch - m1 ns1 7 group2 - -"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, tc.nodes, false); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			if got := strings.Join(strings.Fields(lines[0]), " "); got != tc.head {
				t.Errorf("head %q, want %q", got, tc.head)
			}
			if got := strings.Join(strings.Fields(lines[1]), " "); got != tc.row {
				t.Errorf("row %q, want %q", got, tc.row)
			}
		})
	}
}
