// Package verbs serves the ibverbs API of an endpoint node's NICs to
// programs on the lab host: rocelab's drop-in libibverbs.so.1 (the C
// library in libibverbs/, built by `make`) talks to it over a Unix
// SOCK_SEQPACKET socket beside the node's API socket, and every verbs
// object it creates is an object of the node's endpoint model — QPs,
// CQs, MRs of the same NICs that carry the lab's own traffic, with the
// same transport, congestion control, telemetry and faults.
//
// Memory is shared, not copied: the library moves a registered region's
// pages onto memfds and passes them (SCM_RIGHTS); the server maps them, so
// the NIC model reads and writes the program's memory directly. Completions
// go into a ring in shared memory that the program polls without a system
// call. Everything a connection created is destroyed when it closes (the
// program exited or was killed).
//
// The wire format is libibverbs/proto.h; proto.go mirrors it.
//
// Subfolders: libibverbs is the C library; hostfs gives a program the
// device nodes and sysfs files RDMA software looks for around it.
package verbs
