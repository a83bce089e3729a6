// Package docker runs a lab's nodes in Docker containers, one per node,
// through the Docker Engine API (never the docker command).
//
// # Image
//
// Nothing is pulled: the node image is built locally, FROM scratch, out of
// one static rocelab binary copied to /rocelab (BinaryPath). Its tag is
// rocelab/node:<hash>, where the hash covers the Dockerfile and the
// binary's SHA-256, so the image is rebuilt only when the binary changes.
// The binary must be statically linked (no ELF PT_INTERP): by default the
// running executable (os.Executable) is used, and CheckStatic says how to
// build a static one (CGO_ENABLED=0) when it is not.
//
// # Containers
//
// A node's container is named rl-<lab>-<node> (a hashed name when that is
// too long or not a valid container name), carries the labels
// dev.rocelab.lab and dev.rocelab.node, and is started with no network
// (NetworkMode none: only lo), all capabilities dropped but NET_ADMIN and
// NET_RAW, not privileged, with the lab's run directory bind-mounted at the
// same path. Its command is NodeSpec.Argv, whose first element is
// BinaryPath. The node's NetNSPath is /proc/<container PID>/ns/net, which
// the deploy code uses to move veth ends into the container. The node's
// stdout and stderr go to the container's log (see Runtime.Logs), not to
// NodeSpec.Log.
//
// Leftovers finds containers by the dev.rocelab.lab label only; Remove and
// Leftovers never touch a container without it.
//
// # User containers
//
// A NodeSpec with User set makes the node a container of the user's image
// (label dev.rocelab.role=user, named ContainerName): started first, with
// no network, the spec's hostname, environment, binds and /etc/hosts
// entries (ExtraHosts), and Docker's default capabilities, not privileged.
// It owns the node's network namespace: NetNSPath is its
// /proc/PID/ns/net. The image must be present (HasImage, ErrNoImage):
// nothing is pulled. If the spec has an Argv, the node process runs in a
// sidecar of the node image (role sidecar, SidecarName: "<node>.rdma")
// that joins the user container's network namespace (network mode
// container:<id>) with the node containers' capabilities and bind, and
// the Node's Process is the sidecar's. Removing the user container
// removes its sidecar first. Exec in a user container always runs there.
//
// # Exec
//
// A node in the user's image runs commands in it (docker exec). The lab's
// FROM scratch image has no shell and no tools. Exec therefore runs a
// command inside the container (docker exec) only when the command exists
// in the container's file system; otherwise it runs the host's binary of
// that name inside the container's network namespace (setns on
// /proc/PID/ns/net, the host's mount namespace and file system). So
// `rocelab exec NODE -- ping …` in docker mode runs the host's ping with the
// container's interfaces, routes and sockets. Tools that read /proc/net see
// the container's network; /sys/class/net still shows the host's.
package docker
