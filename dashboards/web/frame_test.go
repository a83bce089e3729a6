package web

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/topologies/graph"
)

// TestFrameNodeHealth: the live view's node states — up, behind (its
// loop says emu_behind 1: alive, but not keeping up with the dilated
// clock) and down with the error.
func TestFrameNodeHealth(t *testing.T) {
	node := func(name string, behind float64) metrics.NodeReading {
		return metrics.NodeReading{Name: name, Kind: "switch", Up: true, Samples: []telemetry.Sample{
			{Name: "emu_behind", Kind: telemetry.Gauge, Labels: []telemetry.Label{{Name: "node", Value: name}}, Value: behind},
		}}
	}
	r := metrics.Reading{Lab: "l", Nodes: []metrics.NodeReading{node("sw1", 0), node("sw2", 1), {Name: "h1", Kind: "host", Err: "process gone"}}}
	f := buildFrame(graph.Layout{}, nil, newSnapshot(r, time.Now()))
	for n, want := range map[string]string{"sw1": "up", "sw2": "behind", "h1": "process gone"} {
		if f.Nodes[n] != want {
			t.Errorf("node %s: %q, want %q", n, f.Nodes[n], want)
		}
	}
}
