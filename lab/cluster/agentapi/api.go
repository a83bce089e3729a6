// Package agentapi is the HTTP/JSON API of a rocelab agent — the process
// that runs, on one machine, its share of labs that span machines — and
// its client. The deploy on the coordinating machine asks every agent for
// its machine (Info), sends each its part (Deploy), and removes it again
// (Destroy); the lab's commands reach every node through the agent that
// runs it (NodeURL, which nodeapi.NewClient takes in place of a socket).
//
// Paths, all under /v1:
//
//	GET    /v1/info                       the machine (Info)
//	PUT    /v1/labs/{lab}                 deploy this machine's part (PartRequest → the part's deploy.Lab)
//	GET    /v1/labs/{lab}                 the part, with each node's health (deploy.LabStatus)
//	DELETE /v1/labs/{lab}                 destroy the part (lifecycle.Report)
//	POST   /v1/labs/{lab}/repair          restart the part's dead nodes (Repaired)
//	POST   /v1/labs/{lab}/restart/{node}  restart one node (deploy.Node)
//	POST   /v1/labs/{lab}/exec/{node}     run a command in a node (ExecRequest → ExecResult)
//	POST   /v1/labs/{lab}/capture/{node}  record a port's frames (CaptureRequest → the pcap)
//	DELETE /v1/labs/{lab}/captures/{id}   end that capture now: it answers with the frames it has
//	ANY    /v1/labs/{lab}/nodes/{node}/…  the node's own API (package node), proxied
//
// Errors are an ErrorBody with a 4xx (the request is wrong: bad topology,
// lab exists — 409) or 5xx status.
package agentapi

import (
	"net/netip"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/topologies/placement"
)

// DefaultPort is the agent's TCP port.
const DefaultPort = 7470

// Info is what an agent says about its machine.
type Info struct {
	// Machine is the machine's name (placements use it).
	Machine string `json:"machine"`
	// Underlay is the machine's address on the network between machines:
	// the far end of every VXLAN tunnel to it.
	Underlay netip.Addr `json:"underlay"`
	// CPUs and CapacityPPS (frames/s the machine forwards losslessly):
	// what placement weights and scale: auto use.
	CPUs        int     `json:"cpus"`
	CapacityPPS float64 `json:"capacity_pps"`
	// Version of the agent's rocelab.
	Version string `json:"version"`
	// Labs whose parts the agent runs.
	Labs []string `json:"labs"`
}

// PartRequest asks an agent to deploy its machine's share of a lab.
type PartRequest struct {
	// Topology is the lab's topology file, as text; Source names it.
	Topology []byte `json:"topology"`
	Source   string `json:"source"`
	// Placement says which nodes the agent's machine runs and which links
	// cross to which machine (with their VNIs).
	Placement *placement.Placement `json:"placement"`
	// Underlay is every machine's underlay address.
	Underlay map[string]netip.Addr `json:"underlay"`
	// Scale is the lab's k; Seed its seed; Origin its fabric time 0.
	Scale  int       `json:"scale"`
	Seed   uint64    `json:"seed"`
	Origin time.Time `json:"origin"`
}

// Repaired lists the nodes a repair restarted.
type Repaired struct {
	Restarted []string `json:"restarted"`
}

// ErrorBody is the body of every error response.
type ErrorBody = jsonapi.ErrorBody

// ExecRequest runs a command in a node of a part (POST
// /v1/labs/{lab}/exec/{node}); the answer is an ExecResult. The command
// gets no standard input, and its output comes back when it ends.
type ExecRequest struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"`
}

// ExecResult is how a command ended and what it wrote (at most
// MaxExecOutput bytes of each stream).
type ExecResult struct {
	Exit   int    `json:"exit"`
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
}

// MaxExecOutput bounds each output stream of a command run through an
// agent.
const MaxExecOutput = 16 << 20

// CaptureRequest records a node port's frames (POST
// /v1/labs/{lab}/capture/{node}); the answer is the pcap itself, its frame
// count in the FramesHeader. Frames or Duration must bound it.
type CaptureRequest struct {
	Port     string        `json:"port"`
	Frames   int           `json:"frames,omitempty"`
	Dir      string        `json:"dir,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// ID names the capture for DELETE /v1/labs/{lab}/captures/{id}, which
	// ends it early with the frames it has (Client.Capture sets one).
	ID string `json:"id,omitempty"`
}

// FramesHeader carries a capture's frame count.
const FramesHeader = "X-Rocelab-Frames"
