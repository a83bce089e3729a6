package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
		"github.com/gopacket/gopacket",
		"github.com/docker/docker/client",
		"gonum.org/v1/plot",
		"github.com/prometheus/client_golang/prometheus",
		"github.com/spf13/cobra",
		"github.com/rocelab/rocelab/lab/emulation/control/deploy",
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

// TestCPUProfileWrittenOnExit: with ROCELAB_NODE_CPUPROFILE set, a node
// that ends, here at once on a configuration it cannot read (status 2),
// leaves a complete profile named after its configuration.
func TestCPUProfileWrittenOnExit(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ROCELAB_NODE_CPUPROFILE", dir)
	args := os.Args
	defer func() { os.Args = args }()
	os.Args = []string{"rocelab-node", "--config", filepath.Join(dir, "rtsw9.json")}
	if code := run(); code != 2 {
		t.Fatalf("exit status %d on a configuration that does not exist, want 2", code)
	}
	files, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("rtsw9-%d.prof", os.Getpid())))
	if err != nil || len(files) != 1 {
		t.Fatalf("profiles in %s: %v (%v)", dir, files, err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A profile is gzipped protobuf: a stopped profile has its gzip
	// trailer, and reads through to the end.
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	if n, err := io.Copy(io.Discard, z); err != nil || n == 0 {
		t.Errorf("%s is not a complete profile: %d bytes, %v", files[0], n, err)
	}
}
