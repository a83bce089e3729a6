package docker

import (
	"fmt"
	"regexp"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// Labels every container of a lab carries, and the node image.
const (
	LabelLab   = "dev.rocelab.lab"
	LabelNode  = "dev.rocelab.node"
	LabelRole  = "dev.rocelab.role"  // RoleNode, RoleUser or RoleSidecar
	LabelImage = "dev.rocelab.image" // on the node image: its content hash
)

// Roles of a lab's containers (label LabelRole).
const (
	// RoleNode is a node in the lab's own image, running the node process.
	RoleNode = "node"
	// RoleUser is a node in the user's image: it owns the node's network
	// namespace.
	RoleUser = "user"
	// RoleSidecar runs the node process of a RoleUser node in the lab's
	// image, inside the user container's network namespace.
	RoleSidecar = "sidecar"
)

// maxName is the longest container name ContainerName returns.
const maxName = 64

// dockerNameRE is what the Docker engine accepts as a container name.
var dockerNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// ContainerName is the name of the container of node in lab:
// "rl-<lab>-<node>", or "rl-<lab>-h<hash>" when that is longer than 64
// characters or not a valid container name.
func ContainerName(lab, node string) string {
	n := state.NetnsPrefix + lab + "-" + node
	if len(n) <= maxName && dockerNameRE.MatchString(n) {
		return n
	}
	return fmt.Sprintf("%s%s-h%012x", state.NetnsPrefix, lab, state.NodeHash(lab, node))
}

// SidecarName is the name of the container that runs the node process of
// node, whose own container is the user's: ContainerName of "<node>.rdma"
// (no node name has a dot, so it is never another node's).
func SidecarName(lab, node string) string { return ContainerName(lab, node+".rdma") }
