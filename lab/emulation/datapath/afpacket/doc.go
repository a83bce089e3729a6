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
//   - SO_TIMESTAMPNS: the kernel stamps every frame with the time it
//     arrived (CLOCK_REALTIME, nanoseconds); ReadBatchStamped returns the
//     stamps, so a reader that comes late still knows when each frame came
//     in. On a veth the stamp is taken when the peer's transmit hands the
//     frame to this side's backlog (netdev_tstamp_prequeue), per frame and
//     in order. The kernel turns arrival stamping on with deferred work a
//     moment after the first socket of the system asks; frames received
//     before that are stamped when they are read;
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
