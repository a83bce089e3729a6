package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// TestTooManyLinks: a topology larger than one machine deploys is refused
// before anything is created, naming the simulator.
func TestTooManyLinks(t *testing.T) {
	tp, err := topologies.Builtin("seed-24k")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Deploy(context.Background(), Options{Topology: tp, LabName: "toolarge", Root: t.TempDir()})
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "75264 links") || !strings.Contains(err.Error(), "rocelab run --sim") {
		t.Fatalf("err %v, want ErrOptions naming the links and the simulator", err)
	}
}
