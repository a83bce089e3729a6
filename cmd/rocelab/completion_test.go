package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// TestCompletion calls cobra's __complete, as a shell does on Tab.
func TestCompletion(t *testing.T) {
	root := t.TempDir()
	// A lab as deploy leaves it: its run directory keeps its topology.
	topo, err := topologies.BuiltinFile("laptop")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(state.Dir(root, "mylab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state.Dir(root, "mylab"), deploy.TopologyFile), topo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"topology flag", []string{"deploy", "-t", ""}, []string{"laptop", "ai-zone-64", "two-zones"}, nil},
		{"topology prefix", []string{"graph", "--topology", "ai"}, []string{"ai-zone-64"}, []string{"laptop"}},
		{"validate's file", []string{"validate", ""}, []string{"laptop"}, nil},
		{"scenario files", []string{"run", ""}, []string{"yaml", ":8"}, nil},
		{"labs", []string{"inspect", "--root", root, "--name", ""}, []string{"mylab"}, nil},
		{"nodes", []string{"exec", "--root", root, ""}, []string{"host1", "rtsw1", "st1"}, []string{"host1:gpu0"}},
		{"ports", []string{"capture", "--root", root, "rtsw1:"}, []string{"rtsw1:p1", "rtsw1:p8"}, []string{"host1", "rtsw2:p1"}},
		{"fault targets", []string{"fault", "add", "--root", root, "h"}, []string{"host1", "host1:gpu0"}, nil},
		{"perf NICs", []string{"perf", "write", "--root", root, "--from", "host1:"}, []string{"host1:gpu0"}, nil},
		{"a new lab's name", []string{"deploy", "--root", root, "--name", ""}, nil, []string{"mylab"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr, err := runCLI(append([]string{"__complete"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d (%v): %s", code, err, stderr)
			}
			words := strings.Fields(stdout)
			for _, w := range tc.want {
				if !strings.Contains(" "+strings.Join(words, " ")+" ", " "+w+" ") {
					t.Errorf("completions %q lack %q", words, w)
				}
			}
			for _, w := range tc.not {
				for _, got := range words {
					if got == w {
						t.Errorf("completions %q have %q", words, w)
					}
				}
			}
		})
	}
}
