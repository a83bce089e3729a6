// Package collective is rocelab's NCCL-style collective engine: ring
// all-reduce, all-gather and reduce-scatter and direct all-to-all across n
// ranks, run over one-sided writes, checked element by element and
// reported in nccl-tests terms.
//
// The engine needs only what an RDMA-based NCCL net plugin uses
// (Transport): each rank registers a receive region (Listen) and writes
// bytes into a peer's region at an offset with a 32-bit immediate (Write).
// Everything is a callback on the model's one goroutine; time comes from a
// clock.Scheduler. Ideal is an in-memory Transport; endpoint/rdmacomm
// adapts queue pairs to the same interface. With Config.Check false only
// lengths travel (payload-free mode).
//
// Chunks are cut into slices of Config.SliceBytes, scheduled per slice
// with at most Config.Window writes posted per rank. Every iteration's
// data is drawn so that sums are exact, and checked bit for bit
// (Result.Wrong). Results follow nccl-tests: size, time, algbw and busbw
// (Layout, Result). In the emulation a Comm runs only its process's ranks
// (Config.Local), meets the others at Config.Barrier before every
// iteration, and Combine merges the processes' results. Its subpackage
// hierplan plans NCCL's hierarchical all-reduce as phases of rings (hosts,
// racks, zones; NVLink steps), for the simulators that run them.
//
// See docs/design.md, "The collective engine (endpoint/collective)", for
// the transport, the algorithms, the data and its check, the results and
// the distributed mode.
package collective
