// Package runtime defines how the lab gives each node its own network stack
// and runs the node's process there. Two runtimes implement it: netns (a
// named network namespace per node; needs only root) and docker (a container
// per node, started with no network and only NET_ADMIN and NET_RAW).
//
// The deploy code creates every node with Create, moves the node's veth ends
// into NetNSPath, and the node process — started by Create — waits for its
// interfaces to appear before it opens its sockets. Everything a runtime
// creates carries the lab's and the node's names (netns name, container
// labels), so that Leftovers can find it again after a crash.
package runtime

import (
	"context"
	"io"

	"github.com/rocelab/rocelab/lab/emulation/runtime/proc"
)

// NodeSpec is what a runtime needs to create one node.
type NodeSpec struct {
	Lab, Node string
	// Argv is the node process's command line (the rocelab binary's path
	// first for netns; for docker, the path inside the image).
	Argv []string
	// RunDir is the lab's run directory on the host (configs, sockets,
	// logs); docker bind-mounts it at the same path in the container.
	RunDir string
	// Log receives the node process's stdout and stderr (netns runtime); a
	// path in RunDir.
	Log string
}

// Ref names one object a runtime created: enough to remove it again.
type Ref struct {
	Runtime string `json:"runtime"` // "netns" or "docker"
	Lab     string `json:"lab"`
	Node    string `json:"node"`
	// ID is the netns name or the container ID.
	ID string `json:"id"`
}

// Node is a created, running node.
type Node struct {
	Ref Ref
	// NetNSPath is a file that refers to the node's network namespace:
	// /run/netns/NAME or /proc/PID/ns/net.
	NetNSPath string
	// Process is the node process (for docker: the container's init).
	Process proc.Process
}

// Stdio are the streams of a command run with Exec.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Runtime creates and removes nodes.
type Runtime interface {
	Name() string
	// Create makes the node's network stack and starts its process there.
	Create(ctx context.Context, spec NodeSpec) (Node, error)
	// Remove stops and deletes what Create made. Removing what is already
	// gone is not an error.
	Remove(ctx context.Context, ref Ref) error
	// Exec runs argv inside the node and returns its exit code.
	Exec(ctx context.Context, ref Ref, argv []string, stdio Stdio) (int, error)
	// Leftovers lists every object of this runtime that belongs to lab (or
	// to any lab when lab is ""), found by name or label, not by state file.
	Leftovers(ctx context.Context, lab string) ([]Ref, error)
}
