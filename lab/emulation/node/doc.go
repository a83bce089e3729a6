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
// link the topology loader, and starts in milliseconds. A Group runs
// several nodes' models on one loop.
//
// Two deliberate departures from the simulator keep the emulation lossless
// on a busy machine (see priority_linux.go and nodeplan's headroom.go):
// node processes run at nice DefaultNice, and switches with automatic PFC
// headroom size it for nodeplan.LagBudget of loop stall (not in a lab on
// one loop, whose links are memory and exact: deploy.Options.LagBudget).
//
// Subfolders: nodeapi holds the API's messages and routes, the Client and
// the cross-node job orchestration; docs/design.md, "The node API", lists
// the routes.
package node
