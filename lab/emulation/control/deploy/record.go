package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

// The lab record: what a deploy leaves in the run directory's LabFile for
// every later command (inspect, exec, restart, destroy) to read.

// LabFile is the file in the run directory that holds the deployed Lab.
const LabFile = "lab.json"

// Lab is a deployed lab: what Deploy returns and writes to LabFile.
type Lab struct {
	Name     string `json:"name"`
	Topology string `json:"topology"`
	Source   string `json:"source"`
	Runtime  string `json:"runtime"`
	Dir      string `json:"dir"`
	Scale    int    `json:"scale"`
	// ScaleBasis says how scale: auto picked Scale: the capacity figure it
	// used and where that figure came from (empty when Scale was given).
	ScaleBasis string    `json:"scale_basis,omitempty"`
	Seed       uint64    `json:"seed"`
	Binary     string    `json:"binary"`
	Created    time.Time `json:"created"`
	// Machine is the machine whose share of the lab this is, for a lab
	// that spans machines ("" for a lab on one machine).
	Machine string `json:"machine,omitempty"`
	// Origin is the lab-wide fabric time 0 (zero: each node's start).
	Origin time.Time `json:"origin,omitzero"`
	// Machines and Placement of a lab that spans machines.
	Machines  []MachineRef         `json:"machines,omitempty"`
	Placement *placement.Placement `json:"placement,omitempty"`
	// Kubernetes is the Lab resource ("namespace/name") of a lab that a
	// Kubernetes controller deployed (package kube).
	Kubernetes string `json:"kubernetes,omitempty"`
	// Timings of each step.
	Timings []Timing `json:"timings"`
	// Waits says what the deploy waited for outside its steps' own work,
	// and how long: a tunnel's VNI still held by a namespace the kernel
	// was tearing down (links.Maker.Waited).
	Waits []string `json:"waits,omitempty"`
	Nodes []Node   `json:"nodes"`
}

// RuntimeMachines is the runtime of a lab that spans machines, as its
// books and Lab say: its nodes run on the machines' agents, and package
// cluster deploys it, reaches its nodes and destroys it.
const RuntimeMachines = "machines"

// MachineRef is one machine of a lab that spans machines.
type MachineRef struct {
	Name     string     `json:"name"`
	Agent    string     `json:"agent"`
	Underlay netip.Addr `json:"underlay"`
	// Nodes is how many of the lab's nodes it runs.
	Nodes int `json:"nodes"`
}

// Timing is how long a step took.
type Timing struct {
	Step    Step          `json:"step"`
	Count   int           `json:"count"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Node is one node of a deployed lab.
type Node struct {
	Name string          `json:"name"`
	Kind topologies.Kind `json:"kind"`
	Role topologies.Role `json:"role,omitempty"`
	// Machine runs the node, in a lab that spans machines.
	Machine string `json:"machine,omitempty"`
	NetNS   string `json:"netns"`
	// PID and StartTime of the node process (0: none).
	PID int `json:"pid,omitempty"`
	// Group names the group of nodes whose one process (a node.Group)
	// runs this node, with Options.NodeGroups ("": a process of its own).
	Group     string `json:"group,omitempty"`
	StartTime uint64 `json:"start_time,omitempty"`
	// Socket, Config and Log of the node process.
	Socket string `json:"socket,omitempty"`
	Config string `json:"config,omitempty"`
	Log    string `json:"log,omitempty"`
	// Container is the node's Docker container (docker runtime): the
	// user's, when the node has an Image of its own.
	Container string `json:"container,omitempty"`
	// Image is the user's image the node's container runs ("" for the
	// lab's own node image).
	Image string `json:"image,omitempty"`
	// Sidecar is the container that runs the node process beside a user
	// container, in its network namespace ("" when there is none).
	Sidecar string `json:"sidecar,omitempty"`
	// Addresses of the node's kernel interfaces (FE NICs).
	Addresses []string `json:"addresses,omitempty"`
	// Interfaces: "port=ifname".
	Interfaces []string `json:"interfaces"`
	// Health is filled by Inspect: "ok", "behind" (HealthBehind), "-" (no
	// process) or the error.
	Health string `json:"health,omitempty"`
	// BehindDetail is the node's own account of how far behind it is,
	// with Health HealthBehind.
	BehindDetail string `json:"behind,omitempty"`
}

// HealthBehind is the Health of a node whose process answers but whose
// loop has fallen behind the lab's dilated clock (nodeapi.Health.Behind).
const HealthBehind = "behind"

// Alive reports whether the node's process answers (ok, or behind), or
// the node has no process of its own ("-").
func (n *Node) Alive() bool { return n.Health == "ok" || n.Health == HealthBehind || n.Health == "-" }

// readLab reads a deployed lab's LabFile.
func readLab(root, lab string) (*Lab, error) {
	b, err := os.ReadFile(filepath.Join(state.Dir(state.RootOr(root), lab), LabFile))
	if err != nil {
		return nil, err
	}
	var l Lab
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("lab %s: %w", lab, err)
	}
	return &l, nil
}

// PartOf tells whose lab under root lab is: the machine an agent deployed
// it as its part for ("" for a lab deployed on this machine without
// agents), and whether its deploy completed (its LabFile exists).
func PartOf(root, lab string) (machine string, deployed bool, err error) {
	l, err := readLab(root, lab)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return l.Machine, true, nil
}

// WriteRecord replaces l's LabFile (without the health Inspect fills in).
func WriteRecord(l *Lab) error {
	c := *l
	c.Nodes = append([]Node(nil), l.Nodes...)
	for i := range c.Nodes {
		c.Nodes[i].Health = ""
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(l.Dir, LabFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Deployed returns the record of lab under root, as deploy wrote it
// (ErrNoLab when it has none).
func Deployed(root, lab string) (*Lab, error) {
	l, err := readLab(root, lab)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %s: %w", lab, ErrNoLab)
	}
	return l, err
}
