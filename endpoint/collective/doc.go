// Package collective is rocelab's NCCL-style collective engine: ring
// all-reduce, all-gather and reduce-scatter and direct all-to-all across n
// ranks, run over one-sided writes, checked element by element and
// reported in nccl-tests terms.
//
// # Transport
//
// The engine needs only what an RDMA-based NCCL net plugin uses (see
// Transport): each rank registers a receive region (Listen), and a rank
// writes n bytes from a local buffer into a peer's region at an offset with
// a 32-bit immediate (Write, an RDMA WRITE with immediate). The writer gets
// a local completion, the peer an arrival (from, offset, n, imm) once the
// data has landed. Everything is a callback on the model's one goroutine;
// time comes from a clock.Scheduler. Ideal is an in-memory Transport (one
// FIFO NIC of rate R per rank, a one-way latency per message, bytes copied
// for real); the endpoint package adapts queue pairs to the same interface.
//
// In payload-free mode (Config.Check false) regions and sources are nil and
// only lengths travel, so a 256 MB all-reduce on thousands of ranks costs
// events, not memory.
//
// # Algorithms
//
// The Count elements of a collective are cut into n chunks [Count·c/n,
// Count·(c+1)/n) — sizes differ by at most one element, and some are empty
// when Count < n — and each chunk into slices of Config.SliceBytes. A slice
// is one write; its immediate carries (ring step << 20 | slice index), so a
// receiver knows what landed without trusting the offset, and checks the
// offset and length against it.
//
// Ring reduce-scatter (n-1 steps): at step s rank r sends chunk r-1-s to
// rank r+1. A receiver adds its own input to the arriving partial sum in
// place and forwards the slice in the next step, so chunk c is complete at
// rank c after n-1 steps. Ring all-gather (n-1 steps): at step s rank r
// forwards chunk r-s, which it received (or, at step 0, owns). Ring
// all-reduce is reduce-scatter followed by all-gather, 2(n-1) steps: the
// last reduction of a slice immediately becomes its first all-gather write.
// Writes land at their final offset in the peer's region (the output
// buffer; for reduce-scatter a full-size scratch whose chunk r is the
// output), so no slot is ever reused within a run and no credits are needed.
//
// Scheduling is per slice, not per step: a slice is forwarded as soon as it
// has arrived and been reduced, so step s+1 of early slices overlaps step s
// of later ones, as NCCL's ring keeps several slices (NCCL_STEPS) of a
// channel in flight. Each rank has a FIFO of ready writes and keeps at most
// Config.Window of them posted (not yet completed). Defaults follow NCCL's
// 4 MiB buffer in 8 steps: 512 KiB slices, window 8.
//
// All-to-all: rank r copies its own block locally and writes block p of
// its input, slice by slice, into block r of rank p's output, visiting
// peers r+1, r+2, … (a shifted order, so that ranks do not all start on the
// same target), with Config.Window writes in flight.
//
// # Data and check
//
// Element i of rank r's input in iteration k is a small integer in [-8, 8]
// from a counter-based generator (SplitMix64 of seed, k, r, i), stored as
// float32 or int32. Sums of up to 2^21 ranks stay below 2^24, where every
// integer is exact in float32, so whatever the order of additions the
// result is exact and the check compares bits, like nccl-tests counting
// #wrong elements; a new iteration draws new values and zeroes the outputs,
// so stale data is caught. Every iteration (warmup included) is checked;
// Result.Wrong is the worst iteration's count summed over ranks.
//
// # Results
//
// Size and count follow nccl-tests (see Layout): the larger buffer of one
// rank. time is the average over the measured iterations, each started when
// the previous one has completed on every rank; algbw = size/time in GB/s
// (1e9 B/s); busbw = algbw × 2(n-1)/n for all_reduce and algbw × (n-1)/n
// for all_gather, reduce_scatter and alltoall, per nccl-tests'
// doc/PERFORMANCE.md (github.com/NVIDIA/nccl-tests). With those factors
// busbw is the per-rank NIC rate an ideal ring achieves: ring all-reduce
// moves 2(n-1)/n × size out of every rank.
//
// # Distributed mode
//
// In the emulation each host process runs only its own ranks: Config.Local
// names them, and the other ranks' writes arrive through the Transport. A
// distributed Comm drives, fills and checks its local ranks only, expects
// per iteration the arrivals its local ranks must receive (known from the
// algorithm), and meets the other processes at Config.Barrier before every
// iteration — so that no process writes iteration k+1 into a region another
// process still reads or checks for iteration k (the single-process Comm
// gets the same guarantee by starting an iteration when every rank is
// done). Arrivals that beat the local release are held and handled when
// the iteration starts; regions are cleared before the barrier.
//
// Results are per process: time is the average of the local iterations,
// each measured from the local release to the moment the local ranks are
// done; #wrong counts the local ranks' wrong elements. Combine merges the
// processes' results: time = max over processes (an iteration ends when the
// slowest process is done), algbw and busbw recomputed from it, wrong = sum.
// With the barrier releasing every process at the same time, as in the
// simulator, the combined result equals the single-process run's whenever
// the slowest process is the same in every iteration (it is on a symmetric
// fabric).
package collective
