// Package docker runs a lab's nodes in Docker containers, one per node,
// through the Docker Engine API (never the docker command).
//
// Nothing is pulled: the node image is built locally, FROM scratch, out of
// one static rocelab binary (BinaryPath; CheckStatic says how to build one)
// and tagged by a hash of the Dockerfile and the binary. A node's container
// is named rl-<lab>-<node>, labelled dev.rocelab.lab and dev.rocelab.node,
// started with no network, NET_ADMIN and NET_RAW only, and the lab's run
// directory bind-mounted; its NetNSPath is /proc/<PID>/ns/net. Leftovers
// finds containers by the lab label only, and Remove and Leftovers never
// touch a container without it.
//
// A NodeSpec with User set makes the node a container of the user's image
// (which must be present: HasImage, ErrNoImage); its node process then runs
// in a sidecar of the node image that joins the user container's network
// namespace. Exec runs a command in the container when the container has
// it, else the host's binary of that name inside the container's network
// namespace.
//
// Subfolders: dockertest builds the small user images that tests of user
// containers deploy, locally through the Docker Engine API.
//
// See docs/design.md, "Docker nodes (lab/emulation/base/sandbox/docker)",
// for the image, the containers, user containers and exec in detail.
package docker
