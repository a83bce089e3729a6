// Package node is the process behind each node of an emulated lab (the
// hidden `rocelab node` command). A switch node is a switchmodel.Switch; an
// endpoint node (a host) is one endpoint.NIC per back-end port. Either is
// driven by an emu.Loop with one AF_PACKET port per interface of the
// node's namespace, a faults.Chain on every port's egress, and a small
// HTTP/JSON API on a root-only Unix socket in the lab's run directory
// through which the CLI reads telemetry, captures frames, adds faults,
// runs perf and collective jobs, and stops the node.
//
// The lab writes one JSON Config per node (nodeplan.Switch for switches,
// built from the resolved topology and fabric.Routes; nodeplan.Endpoint
// for hosts) and starts rocelab-node (or `rocelab node`) with --config
// FILE inside the node's namespace; the node then serves its socket until
// SIGTERM or POST /shutdown. The node reads only that JSON: it does not
// link the topology loader, and starts in milliseconds.
//
// Two deliberate departures from the simulator keep the emulation lossless
// on a busy machine (see priority_linux.go and nodeplan's headroom.go):
// node processes run at nice DefaultNice, and switches with automatic PFC
// headroom size it as if every cable were longer by nodeplan.LagBudget /
// scale of fabric time, the stall of a node loop the kernel kept waiting
// (not in a lab on one loop, whose links are memory and exact:
// deploy.Options.LagBudget).
//
// # API
//
//	GET  /health         Health
//	GET  /info           Info: ports, scale, fabric time, lag, captures
//	GET  /telemetry      Telemetry: the loop's and the model's samples
//	                     (?name=N, repeatable: only those samples)
//	POST /capture        CaptureRequest → CaptureStatus (starts a pcap)
//	POST /capture/stop   CaptureStopRequest → CaptureStatus
//	POST /faults, GET /faults, DELETE /faults[/{id}]   live faults
//	POST /shutdown       stops the node
//
// Endpoint nodes add the QP, perf, collective and job routes listed in
// endpoint_api.go. Errors are {"error": "..."} with a 4xx or 5xx status.
// The messages, the Client and the cross-node job orchestration are in
// package nodeapi.
package node
