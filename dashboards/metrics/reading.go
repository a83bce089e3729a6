package metrics

import (
	"context"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// Reading is one look at a whole lab: every node's telemetry, read at about
// the same wall-clock instant.
type Reading struct {
	Lab   string
	Nodes []NodeReading
}

// NodeReading is one node of a Reading. A node that did not answer has Up
// false and Err saying why; its other fields are empty.
type NodeReading struct {
	Name string
	Kind string // switch, host, storage
	Up   bool
	Err  string
	// FabricTime is the node's fabric clock when it was read, in seconds
	// (its emu_fabric_seconds_total sample).
	FabricTime float64
	// Ports in index order: the port's topology name (p1, gpu0) and rate.
	Ports []Port
	// Samples are the node's telemetry as its API returns it.
	Samples []telemetry.Sample
	// Faults are the node's live faults.
	Faults []Fault
}

// Port is one port of a node.
type Port struct {
	Name string
	Rate clock.Rate
}

// Fault is one live fault on a node.
type Fault struct {
	ID      string
	Spec    string
	Targets []string
	Packets map[string]int64
}

// Source reads a lab. Read returns an error only when the lab itself cannot
// be read (not deployed); dead nodes come back with Up false.
type Source interface {
	Read(ctx context.Context) (Reading, error)
}

// PortName returns the topology name of the port with index i ("p1"), or
// the index itself when the node did not say.
func (n *NodeReading) PortName(i string) string {
	idx, err := strconv.Atoi(i)
	if err != nil || idx < 0 || idx >= len(n.Ports) {
		return i
	}
	return n.Ports[idx].Name
}
