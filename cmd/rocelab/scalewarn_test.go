package main

import (
	"strings"
	"testing"
)

func TestScaleWarning(t *testing.T) {
	for _, tc := range []struct {
		name       string
		k, groups  int
		scaleGiven bool
		want       []string // substrings; none: no warning
		not        []string
	}{
		{name: "small k", k: 1888},
		{name: "at the threshold", k: slowScale},
		{name: "auto, a process per node", k: 20000,
			want: []string{"k = 20000", "1 ms of fabric time takes 20 s of wall time", "a 5 ms perf run takes 100 s", "--node-groups", "smaller topology", "--scale N"},
			not:  []string{"a smaller --scale"}},
		{name: "auto, groups", k: 12000, groups: 2,
			want: []string{"takes 12 s of wall time", "smaller topology", "--scale N"},
			not:  []string{"--node-groups"}},
		{name: "given", k: 50000, scaleGiven: true,
			want: []string{"takes 50 s", "4.2 min", "a smaller --scale", "--node-groups"},
			not:  []string{"--scale N"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scaleWarning(tc.k, tc.groups, tc.scaleGiven)
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("warning %q, want none", got)
				}
				return
			}
			if !strings.HasSuffix(got, ".") || strings.Contains(got, "\n") {
				t.Errorf("not one sentence: %q", got)
			}
			for _, s := range tc.want {
				if !strings.Contains(got, s) {
					t.Errorf("%q lacks %q", got, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(got, s) {
					t.Errorf("%q has %q", got, s)
				}
			}
		})
	}
}
