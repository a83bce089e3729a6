package nodeapi

import "github.com/rocelab/rocelab/faults"

// FaultRequest is POST /faults: put Spec on the egress of Target — a
// port's ifname, its name (the NIC's name or its port part on an endpoint
// node, pN on a switch) or 0-based index — or on every port with "all".
// Spec travels in its typed JSON form (faults.Spec.MarshalJSON): the
// caller parsed it once, the node does not parse it again.
type FaultRequest struct {
	Target string      `json:"target"`
	Spec   faults.Spec `json:"spec"`
}

// FaultInfo describes a placed fault.
type FaultInfo struct {
	// ID is the node's fault ID (f1, f2, …).
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Spec is the canonical spec.
	Spec string `json:"spec"`
	// Ports are the ifnames of the ports it is on; Targets their
	// node:port names.
	Ports   []string `json:"ports"`
	Targets []string `json:"targets"`
	// Packets are its counters by event (dropped, delayed, generated, …),
	// summed over its ports: those of its kind always (0 until hit), any
	// other once non-zero.
	Packets map[string]int64 `json:"packets"`
}

// FaultsCleared is DELETE /faults.
type FaultsCleared struct {
	Cleared int `json:"cleared"`
}
