// Package flowsim is rocelab's flow-level simulator (`rocelab run --sim
// --flow`): the same scenarios as simlab, with flows as rates instead of
// packets, for sweeps that want answers in seconds.
//
// Build turns a topology into link directions of fixed capacity (each
// port's rate) and builds the fabric's switch models (fabric.BuildSim, the
// packet simulator's, seeded alike, their routes computed on demand) only
// to ask them for paths: a QP's
// path is fabric.SimFabric.Path of its packets' headers — the source port
// endpoint.PathPort gives its QP number, the peer's QP number for
// QP-aware hashing, the data DSCP — so it takes the ECMP next hops the
// packet simulator's switches pick (switchmodel.Switch.NextHops: the same
// lookup and hash). QPs are numbered as the packet simulator's NICs number
// them (each NIC's first number drawn as endpoint.NewNIC draws it, then in
// the order simlab's jobs create QPs). A MetaRoCE QP spraying over N
// source ports is N flows; a switch that sprays a class per packet splits
// a flow evenly over its equal-cost ports (shares of the links).
//
// Net runs the flows on a core/sim engine, event-driven: a QP sends its
// messages one after the other; while it has one queued each of its paths
// is a flow whose rate is its max-min fair share of the link capacities
// (MaxMin, progressive filling), brought up to date at every instant a QP
// starts or stops sending — incrementally, only where the change can
// reach (solver) — with message ends within TieTolerance one instant; a
// message lands its path's propagation (plus one frame's
// store-and-forward per switch) after its last byte left, and completes
// when the acknowledgement is back (the propagation again).
//
// What is abstracted: the fabric is lossless (no drops), congestion
// control has converged to the max-min share at once, queues are empty
// (no queueing delay), and neither PFC's pauses nor their head-of-line
// blocking and spreading, ECN marks, nor DCQCN's dynamics are modelled —
// so switch queue, PFC, ECN and drop metrics are not measured. Perf jobs
// (PerfJob: message completion times, goodput as simlab measures them),
// collectives (CollJob: the collective engine of endpoint/collective,
// its rings, slices and windows, over a Transport of flow-level writes)
// and the hierarchical all-reduce (HierJob: three phases of such rings,
// or, for rails too long for the engine, the ring recurrence of ring.go
// at fixed max-min rates) run on it; docs/performance.md ("Flow-level
// mode") gives its error against the packet simulator per kind of
// scenario.
package flowsim
