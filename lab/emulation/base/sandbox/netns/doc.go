// Package netns runs a lab's nodes in named Linux network namespaces.
//
// A namespace is created the way iproute2 does it (a bind mount of the
// namespace file under /run/netns/NAME, via vishvananda/netns), so
// `ip netns exec NAME …`, tcpdump and friends see it. As iproute2 does,
// /run/netns is first made a shared mount point of its own, so that a
// neighbour's later `ip netns add` does not bind it over the lab's
// namespaces (which then could be neither unmounted nor removed).
//
// # Threads and namespaces
//
// A network namespace belongs to an OS thread, not to a Go program.
// Everything here that enters a namespace does it on a fresh goroutine
// that calls runtime.LockOSThread and setns(2). If the thread can be put
// back into its original namespace it is unlocked and returned to the
// scheduler; if not, the goroutine exits still locked, and the Go runtime
// then terminates the thread instead of reusing it. No other goroutine can
// ever run on a thread that is in the wrong namespace.
//
// Sockets and netlink handles remember the namespace they were opened in:
// a socket opened inside Do keeps working from any goroutine afterwards,
// and Handle returns a netlink handle bound to a namespace without
// entering it.
//
// # Processes
//
// Start forks a process from a thread that is inside the namespace: a
// child inherits the network namespace of the thread that forks it, so
// the node process (a re-exec of the rocelab binary, or any command) runs
// in the namespace from its first instruction, without nsenter. The child
// gets its own process group (Setpgid) so that cleanup can signal the
// whole group, and Start returns its PID with its start time (package
// proc), which the lab records so that cleanup never kills a recycled PID.
package netns
