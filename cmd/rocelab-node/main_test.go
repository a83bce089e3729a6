package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// TestLinksOnlyTheNode: the node binary does not link the packages whose
// initialisation made a node process slow to start (gopacket's layer
// tables alone took 22 ms), nor the CLI's world. Deploy of a 106-node lab
// starts this binary 106 times.
func TestLinksOnlyTheNode(t *testing.T) {
	gobin := testenv.RequireTool(t, "go")
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{
		"github.com/google/gopacket",
		"github.com/docker/docker/client",
		"gonum.org/v1/plot",
		"github.com/prometheus/client_golang/prometheus",
		"github.com/spf13/cobra",
		"github.com/rocelab/rocelab/lab/emulation/deploy",
		// The topology loader and what it validates with (YAML, the
		// schema, image references): their package initialisation cost
		// every node process 4-5 ms.
		"github.com/rocelab/rocelab/topologies",
		"github.com/distribution/reference",
		"go.yaml.in/yaml",
		"github.com/invopop/jsonschema",
	} {
		for _, d := range deps {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("rocelab-node links %s", d)
				break
			}
		}
	}
}
