// Package netns runs a lab's nodes in named Linux network namespaces.
//
// A namespace is created the way iproute2 does it (a bind mount of the
// namespace file under /run/netns/NAME, via vishvananda/netns), so
// `ip netns exec NAME …`, tcpdump and friends see it; /run/netns is first
// made a shared mount point of its own, as iproute2 does.
//
// Everything here that enters a namespace does it on a fresh goroutine
// locked to its OS thread, and no goroutine ever runs on a thread left in
// the wrong namespace. Sockets and netlink handles opened inside Do keep
// their namespace from any goroutine; Handle returns a netlink handle
// bound to a namespace without entering it. Start forks a process from a
// thread inside the namespace, in its own process group, and returns its
// PID with its start time (package proc).
//
// Subfolders: netnstest makes the named namespaces of tests, under names
// unique to the run, deleted when the test ends.
//
// docs/design.md, "Network namespaces (lab/emulation/base/sandbox/netns)",
// says why threads are locked and how processes start inside a namespace.
package netns
