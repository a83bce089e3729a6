// Package sandbox defines how the lab gives each node its own network
// stack and runs the node's process there: the Runtime interface. Two
// runtimes implement it, each in a subfolder: netns (a named network
// namespace per node; needs only root) and docker (a container per node,
// started with no network and only NET_ADMIN and NET_RAW).
//
// The deploy code creates every node with Create, moves the node's veth ends
// into NetNSPath, and the node process — started by Create — waits for its
// interfaces to appear before it opens its sockets. Everything a runtime
// creates carries the lab's and the node's names (netns name, container
// labels), so that Leftovers can find it again after a crash.
package sandbox

import (
	"context"
	"io"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
)

// NodeSpec is what a runtime needs to create one node.
type NodeSpec struct {
	Lab, Node string
	// Argv is the node process's command line (the rocelab binary's path
	// first for netns; for docker, the path inside the image). It may be
	// empty only for a node with a User container: no node process.
	Argv []string
	// RunDir is the lab's run directory on the host (configs, sockets,
	// logs); docker bind-mounts it at the same path in the container.
	RunDir string
	// Log receives the node process's stdout and stderr (netns runtime); a
	// path in RunDir.
	Log string
	// User, if set, makes the node a container of the user's image (docker
	// runtime only); the node process runs beside it (see package docker).
	User *UserContainer
}

// UserContainer is a node's own container: the user's image, which owns
// the node's network namespace.
type UserContainer struct {
	// Image must be present locally: nothing is pulled.
	Image string
	// Cmd replaces the image's CMD when set.
	Cmd []string
	// Env is "KEY=value"; Binds "HOST:CONTAINER[:ro|rw]".
	Env, Binds []string
	// Hostname of the container.
	Hostname string
	// Hosts are extra /etc/hosts entries, "name:address".
	Hosts []string
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
	// Process is the node process (for docker: the container's init; with
	// a user container, the init of the sidecar that runs the node process,
	// or of the user container when there is no node process).
	Process proc.Process
	// Image is the user's image of a node with a user container, "" for
	// the lab's own node image.
	Image string
}

// Stdio are the streams of a command run with Exec.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
	// Env is added to the command's environment ("KEY=value"): rocelab
	// exec uses it to point verbs programs at the lab's NICs.
	Env []string
	// Prepare, if set, runs on the OS thread that starts the command,
	// inside the node's network namespace, just before the start; the
	// thread is thrown away afterwards, so Prepare may leave it in
	// namespaces of its own (rocelab exec gives a verbs program the
	// host's /dev/infiniband and /sys/class/infiniband in a mount
	// namespace of its own: package hostfs). The netns runtime runs it;
	// the docker runtime does not yet (neither for a command inside a
	// user's container nor for one run from the host in its namespace).
	Prepare func() error
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
