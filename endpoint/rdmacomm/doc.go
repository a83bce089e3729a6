// Package rdmacomm adapts MetaRoCE endpoint queue pairs to the collective
// engine's Transport (endpoint/collective): the RDMA data path of an
// NCCL-style net plugin, in the model.
//
// New takes one endpoint.NIC per rank and connects one reliable-connected
// QP pair per pair of ranks that talk (ring neighbours, or every pair for
// all-to-all: Options.Pairs) in the reliability mode, congestion control
// and path count of Options. Listen registers a rank's receive region for
// remote writes; every QP keeps Options.RecvDepth receives posted.
//
// Write posts two work requests on the writer's QP: a zero-length RDMA
// WRITE WITH IMMEDIATE whose immediate is the byte offset (so a region is
// at most 4 GiB − 1), then the data, an RDMA WRITE WITH IMMEDIATE carrying
// the engine's immediate. RC completes receives in message order, so the
// receiver pairs each data completion with the offset announced before it.
// The writer's done runs on the data's send completion. A node's
// collective job speaks the same protocol on each QP through a Channel.
//
// See docs/design.md, "Collectives over queue pairs (endpoint/rdmacomm)",
// for the wiring, how the offset travels and what it costs, and
// distributed runs.
package rdmacomm
