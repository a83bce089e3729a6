package main

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/endpoint/collective"
)

func TestNCCLTable(t *testing.T) {
	row := func(size int64, busbw float64, wrong int64, checked bool) collective.Result {
		return collective.Result{Op: "allreduce", Ranks: 8, Size: size, Count: size / 4, Type: "float", RedOp: "sum",
			TimeUs: 79.38, AlgBW: busbw / 1.75, BusBW: busbw, Wrong: wrong, Checked: checked}
	}
	for _, tc := range []struct {
		name    string
		results []collective.Result
		want    []string
	}{
		{"two sizes", []collective.Result{row(1048576, 23.12, 0, true), row(4194304, 38.26, 0, true)}, []string{
			"out-of-place", "in-place",
			"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
			"     1048576        262144     float     sum      -1    79.38   13.21   23.12      0      n/a     n/a     n/a    n/a",
			"# in-place: not run",
			"# Out of bounds values : 0 OK",
			"# Avg bus bandwidth    : 30.69 (out-of-place)",
		}},
		{"wrong elements", []collective.Result{row(1024, 1, 3, true)}, []string{"# Out of bounds values : 3 FAILED", "# Avg bus bandwidth    : 1 "}},
		{"unchecked", []collective.Result{row(1024, 2.5, 0, false)}, []string{"   N/A ", "# Out of bounds values : N/A", "# Avg bus bandwidth    : 2.5 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeNCCLTable(&b, tc.results); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, s := range tc.want {
				if !strings.Contains(got, s) {
					t.Errorf("table lacks %q:\n%s", s, got)
				}
			}
			// Every row lines up under the header: same width.
			lines := strings.Split(got, "\n")
			for _, l := range lines[3 : 3+len(tc.results)] {
				if len(l) != len(lines[1]) {
					t.Errorf("row %q is %d wide, the header %d", l, len(l), len(lines[1]))
				}
			}
		})
	}
}
