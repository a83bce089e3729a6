// Package rdmacomm adapts MetaRoCE endpoint queue pairs to the collective
// engine's Transport (endpoint/collective): the RDMA data path of an
// NCCL-style net plugin, in the model.
//
// # Wiring
//
// New takes one endpoint.NIC per rank and connects one reliable-connected
// QP pair per pair of ranks that talk — ring neighbours (r, r+1 mod n) for
// the ring collectives, every pair for all-to-all (Options.Pairs) — in the
// reliability mode (rocev2 or metaroce), congestion control and path count
// of Options. One QP pair carries both directions.
//
// Listen registers the rank's receive region as a memory region with remote
// write access: RegMR over the region's bytes, or RegMRLen of its size in
// payload-free mode (region nil; then the NICs should not be Raw, and only
// lengths travel). Every QP keeps Options.RecvDepth receive WRs posted for
// the immediates and reposts one for each it consumes.
//
// # One write, two work requests: how the offset travels
//
// An RDMA WRITE WITH IMMEDIATE tells the receiver the immediate and the
// length (the receive completion), not where the data landed. The engine's
// immediate is its own tag (step << 20 | slice), so the offset travels
// separately: Write posts, on the writer's QP toward the target,
//
//  1. an offset announcement: a zero-length RDMA WRITE WITH IMMEDIATE whose
//     immediate is the byte offset (so a region is at most 4 GiB − 1), not
//     signaled; then
//  2. the data: an RDMA WRITE WITH IMMEDIATE of Len bytes to the region's
//     address + Off, carrying the engine's immediate, signaled.
//
// RC completes receives in message order (MetaRoCE included: it places out
// of order but completes in order), so on each QP the receive completions
// alternate announcement, data, announcement, data…: the receiver keeps the
// last announced offset per QP and reports the data's completion as the
// arrival (from, announced offset, byte length, immediate). This works in
// payload-free mode too, where no header bytes could travel. The cost is
// one minimum-size frame per write (84 wire bytes next to a 512 KiB slice's
// ≈ 540 KB: 0.016%).
//
// The writer's done runs on the data WR's send completion (RC completes in
// order, so the announcement is done too), with an error for any status
// but success. A source slice is registered for the life of its write
// (RegMR on Src[:Len], deregistered on completion); payload-free writes use
// a per-rank payload-free source region.
//
// # Distributed runs
//
// In the simulator every rank's NIC is in one process and New wires all
// QPs. The emulation's processes would exchange endpoint.ConnInfo and each
// region's (address, rkey) out of band instead; that exchange belongs to the
// lab's node API and is not here, but the protocol on each QP is: the
// node's collective job speaks it through a Channel per QP, as the
// Transport does.
package rdmacomm
