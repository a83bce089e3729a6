// Package afpacket is the emulation datapath: raw Ethernet frames in and
// out of one interface through an AF_PACKET socket, in batches.
//
// A Conn is bound to one interface of one network namespace. The socket is
// opened inside the namespace (package netns) and keeps working from any
// goroutine afterwards. It is set up for a switch or NIC port: it does not
// read back its own transmissions, takes every frame whatever its MAC,
// gives a VLAN-tagged frame back as it was sent, and stamps every frame
// with the time the kernel received it (ReadBatchStamped).
//
// I/O is batched with recvmmsg(2) and sendmmsg(2): ReadBatch never blocks
// and returns what is pending, WriteBatch sends a whole batch (waiting for
// buffer space if needed). A node's loop waits on all its ports and its
// next timer with a Poller (epoll plus an eventfd for wake-ups from other
// goroutines, nanosecond timeouts through epoll_pwait2).
//
// The kernel must see plain frames for this to model a wire: turn
// offloads off on the interfaces (package links does), or TCP across a
// veth shows up here as 64 KB super-frames.
//
// The OS code is in the _linux files; elsewhere every function returns an
// error. docs/design.md, "AF_PACKET ports (lab/emulation/datapath/afpacket)",
// lists the socket options and when the kernel's stamps are taken.
package afpacket
