// Package endpoint is the MetaRoCE endpoint: a model of an RDMA NIC port
// and its reliable-connected transport, driven by a clock.Scheduler like
// every rocelab model (no goroutines, no wall clock, seeded randomness).
//
// The NIC (NewNIC) is a wire.Sink on its ingress and transmits into the
// sink given to Attach. It serializes one frame at a time at line rate
// (wire.OnWireBytes per frame), sends control frames (ACK, SACK, CNP,
// credit, hello) ahead of data by priority, schedules QPs round-robin,
// paces each flow (a QP, or a path of a multipath QP) to its cc.Sender,
// obeys PFC per priority, and is the ECN notification point.
//
// The verbs-like API: AllocPD, PD.RegMR / RegMRLen (payload-free), CreateCQ
// (Poll or OnCompletion), PD.CreateQP, QP.Info / Connect (or ToInit, ToRTR,
// ToRTS), PostSend (SEND, SEND with immediate, WRITE, WRITE with immediate,
// READ) and PostRecv.
//
// Two reliability modes: ModeRoCEv2 (go-back-N, in-order, interoperable
// with RoCEv2 RC) and ModeMetaRoCE (negotiated in band; selective
// acknowledgement and retransmission, out-of-order placement, multipath
// spraying with per-path congestion and loss state). docs/metaroce-spec.md
// is the normative description of the wire format and state machines.
//
// Subfolders: cc (the congestion-control interface, with cc/dcqcn,
// cc/credit and cc/none); collective (the NCCL-style collective engine)
// and rdmacomm (its transport over queue pairs); perftest (the perftest
// tools as a model over NICs); adapter (the compliance adapter's verbs on
// one QP and its buffer); connmgr (a port's Communication Manager: the
// connection state machine of CM MADs on QP1); cmagent (the compliance
// adapter's CM consumer: accepts, confirms and records, for the suite to
// drive a NIC's CM).
package endpoint
