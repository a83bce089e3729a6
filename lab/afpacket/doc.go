// Package afpacket is the emulation datapath: raw Ethernet frames in and
// out of one interface through an AF_PACKET socket, in batches.
//
// A Conn is bound to one interface of one network namespace. The socket is
// opened inside the namespace (package netns) and keeps working from any
// goroutine afterwards. It is set up for a switch or NIC port:
//   - PACKET_IGNORE_OUTGOING: the node does not read back its own
//     transmissions;
//   - promiscuous mode: the port takes every frame, whatever its MAC;
//   - PACKET_AUXDATA: the kernel always strips an 802.1Q tag on receive
//     and hands it beside the frame; ReadBatch puts it back in place, so
//     a frame is read as it was sent (PCP bits included);
//   - large socket buffers (SO_RCVBUFFORCE/SO_SNDBUFFORCE as root).
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
// error.
package afpacket
