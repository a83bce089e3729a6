// Package chakra reads MLCommons Chakra execution traces (ET) and replays
// them as training steps: one DAG of compute, memory and communication
// nodes per rank, walked the way ASTRA-sim walks it.
//
// A trace is one file per rank, PREFIX.RANK.et, each a stream of
// varint-length-delimited protobuf messages: a GlobalMetadata, then Nodes
// (the framing Chakra's feeder reads). Load and LoadDir decode and validate
// every file and return one Trace per rank, or an ErrorList naming the file
// and node (id, name) of every problem: missing or non-contiguous ranks,
// truncated files, duplicate node ids, data dependencies on nodes that do
// not exist (control dependencies on them are ignored, as Chakra's feeder
// ignores control dependencies), cycles, unknown node types, collectives without a known type or
// size, sends and receives without a peer.
//
// Start replays a set of traces against a clock.Scheduler (core/sim's
// engine in tests and in the simulator; the scheduler is the only source of
// time, and nothing here runs a goroutine). A node is issued once all its
// data and control dependencies completed; compute nodes take their
// duration_micros on the rank's one compute stream, one at a time in issue
// order; memory and metadata nodes complete at once (or after their
// duration); collectives and point-to-point messages are matched across
// ranks — the k-th collective a rank issues in a process group with the
// k-th of every other member, a send with the receive of the same (source,
// destination, tag) in order — and handed, once every participant issued
// its part, to the caller's Comm, which calls back when the operation is
// done. A process group's collectives run one at a time, in the order they
// matched, as NCCL runs a communicator's operations on its one stream: a
// collective's span starts when it was handed over. IdealComm is the reference Comm of tests: every operation takes a
// time given by a function of its kind and size.
//
// The Result gives per rank the iteration time, the time in compute and in
// communication, the exposed (not overlapped by compute) communication
// time, and the timeline of every node as a span.
//
// Subfolders: etpb holds the Go types generated from Chakra's et_def.proto
// (vendored with its source and licence).
package chakra
