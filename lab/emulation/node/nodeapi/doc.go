// Package nodeapi is the node's HTTP/JSON API over its Unix socket: the
// messages, the Client, and the cross-node orchestration of perf and
// collective jobs (RunPerf, RunCollective) that the CLI and scenario runs
// use. The server side is package node; this package does not import it.
//
// Every node serves:
//
//	GET  /health         Health
//	GET  /info           Info: ports, scale, fabric time, lag, captures
//	GET  /telemetry      Telemetry: the loop's and the model's samples
//	POST /capture        CaptureRequest → CaptureStatus (starts a pcap)
//	POST /capture/stop   CaptureStopRequest → CaptureStatus
//	POST   /faults       FaultRequest → FaultInfo
//	GET    /faults       []FaultInfo
//	DELETE /faults/{id}  FaultInfo of the fault removed
//	DELETE /faults       FaultsCleared
//	POST /shutdown       stops the node
//
// Endpoint nodes add:
//
//	GET    /nics                 []NICInfo
//	POST   /qp                   QPRequest → QPInfo (a QP, its CQ and buffer)
//	GET    /qp/{id}              QPInfo
//	POST   /qp/{id}/connect      ConnectRequest → QPInfo (now RTS)
//	DELETE /qp/{id}              destroys the QP and deregisters its buffer
//	POST   /qps/delete           DeleteQPsRequest → QPsDeleted (many in one loop turn)
//	POST   /qp/{id}/send         WorkRequest → {} (the compliance adapter: adapter.go)
//	POST   /qp/{id}/recv         RecvRequest → {}
//	GET    /qp/{id}/completions  []Completion, drained
//	GET    /qp/{id}/mem?offset=O&len=N  Mem;  PUT /qp/{id}/mem?offset=O  Mem → {}
//	POST   /perf                 PerfRequest → JobStatus
//	POST   /collective           CollectiveRequest → JobStatus (set up)
//	POST   /jobs/{id}/start      CollectiveStart → JobStatus
//	POST   /jobs/{id}/release    Release → JobStatus (a collective barrier)
//	POST   /jobs/{id}/stop       JobStatus (ends a server perf job, checks data)
//	GET    /jobs/{id}?after=V[&wait_ms=W]  JobStatus, waiting (up to W ms, at most 5 s) for version > V
//
// Errors are ErrorBody ({"error": "..."}) with a 4xx or 5xx status; the
// Client returns them as *APIError.
package nodeapi
