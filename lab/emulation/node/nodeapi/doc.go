// Package nodeapi is the node's HTTP/JSON API over its Unix socket: the
// messages and the Client, nothing else (running perf and collectives
// across nodes is package jobs'). The server side is package node; this
// package does not import it.
//
// Every node serves /health, /info, /telemetry, /capture, /faults and
// /shutdown; endpoint nodes add /nics, the QP routes (/qp, /qps/delete, a
// QP's send, recv, completions and mem: the compliance adapter), /perf,
// /collective and /jobs/{id} (start, release, stop, and a status read that
// waits for a newer version). Each route takes and returns one message
// type of this package.
//
// Errors are ErrorBody ({"error": "..."}) with a 4xx or 5xx status; the
// Client returns them as *APIError.
//
// See docs/design.md, "The node API (lab/emulation/node/nodeapi)", for
// every route with its request and reply.
package nodeapi
