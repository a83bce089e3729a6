package stats

import (
	"strings"
	"testing"
)

// TestWriteTableOnlyWhatThereIs: a host's report (NICs and QPs, no switch
// port) prints no empty port table, and tables are separated by one
// blank line with none before the first.
func TestWriteTableOnlyWhatThereIs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      Report
		want   []string
		absent []string
	}{
		{"host only", Report{NICs: []NIC{{Node: "host1:gpu0"}}, QPs: []QP{{Node: "host1:gpu0", QP: "0x11"}}},
			[]string{"NIC  TX", "QP  TX"}, []string{"IFNAME", "\n\n\n"}},
		{"switch only", Report{Ports: []Port{{Node: "rtsw1", Port: "p1"}}}, []string{"IFNAME"}, []string{"NIC  TX"}},
	} {
		var b strings.Builder
		if err := WriteTable(&b, tc.r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.HasPrefix(out, "\n") {
			t.Errorf("%s: a blank line before the first table:\n%s", tc.name, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, out)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(out, a) {
				t.Errorf("%s: %q in\n%s", tc.name, a, out)
			}
		}
	}
}
