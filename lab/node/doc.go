// Package node is the process behind each switch of an emulated lab (the
// hidden `rocelab node` command): a switchmodel.Switch driven by an
// emu.Loop, one AF_PACKET port per interface of the node's namespace, and
// a small HTTP/JSON API on a root-only Unix socket in the lab's run
// directory through which the CLI reads telemetry, captures frames and
// stops the node.
//
// The lab writes one JSON Config per node (FromTopology builds it from the
// resolved topology and fabric.Routes) and starts `rocelab node --config
// FILE` inside the node's namespace; the node then serves its socket until
// SIGTERM or POST /shutdown. Config.Kind is "switch" today; "endpoint" is
// reserved for the MetaRoCE endpoint node, which will reuse the Loop, the
// ports, the API and the Client.
//
// # API
//
//	GET  /health         Health
//	GET  /info           Info: ports, scale, fabric time, lag, captures
//	GET  /telemetry      Telemetry: the loop's and the model's samples
//	POST /capture        CaptureRequest → CaptureStatus (starts a pcap)
//	POST /capture/stop   CaptureStopRequest → CaptureStatus
//	POST /shutdown       stops the node
//
// Errors are {"error": "..."} with a 4xx or 5xx status. Client wraps it all.
package node
