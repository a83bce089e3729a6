package node

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// The fault API every node has:
//
//	POST   /faults        FaultRequest → FaultInfo
//	GET    /faults        []FaultInfo
//	DELETE /faults/{id}   FaultInfo of the fault removed
//	DELETE /faults        FaultsCleared
//
// A fault sits on the egress of a port, between the model and the wire:
// a stage (loss, delay, …) acts on every frame the port sends; a
// generator (storm, elephant, incast) sends from the port. The change is
// posted onto the node's loop at once, so it takes effect at the loop's
// next turn: well within one millisecond of wall clock.

func (n *Node) faultRoutes(h func(string, func(*http.Request) (any, error))) {
	h("POST /faults", withBody(n.addFault))
	h("GET /faults", n.listFaults)
	h("DELETE /faults/{id}", n.removeFault)
	h("DELETE /faults", n.clearFaults)
}

// faultPorts resolves a fault target to port indexes.
func (n *Node) faultPorts(target string) ([]int, error) {
	if target == "all" || target == "*" {
		out := make([]int, len(n.cfg.Ports))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	for i, nc := range n.cfg.NICs {
		_, port, _ := strings.Cut(nc.Name, ":")
		if nc.Name == target || port == target {
			return []int{i}, nil
		}
	}
	if n.ep == nil {
		for i := range n.cfg.Ports {
			if n.fx.portLabel(i) == target || n.fx.portLabel(i) == n.cfg.Name+":"+target {
				return []int{i}, nil
			}
		}
	}
	i, err := n.portIndex(target)
	if err != nil {
		return nil, badRequest("fault target %q: no such port (want an ifname, a port name, an index or all)", target)
	}
	return []int{i}, nil
}

func (n *Node) addFault(r *http.Request, req nodeapi.FaultRequest) (any, error) {
	spec := req.Spec
	if spec.Params == nil {
		return nil, badRequest("fault request without a spec")
	}
	ports, err := n.faultPorts(req.Target)
	if err != nil {
		return nil, err
	}
	var out nodeapi.FaultInfo
	var ferr error
	err = n.loop.Do(context.WithoutCancel(r.Context()), func() {
		var id faults.ID
		if id, ferr = n.fx.add(ports, spec); ferr == nil {
			out = n.fx.info(id)
		}
	})
	if err != nil {
		return nil, err
	}
	if ferr != nil {
		// The spec arrived typed but unchecked: a value out of range
		// (loss 200%) fails here, and is the caller's mistake.
		return nil, badRequest("%v", ferr)
	}
	return out, nil
}

func (n *Node) listFaults(r *http.Request) (any, error) {
	out := []nodeapi.FaultInfo{}
	err := n.loop.Do(r.Context(), func() {
		for _, id := range n.fx.ids() {
			out = append(out, n.fx.info(id))
		}
	})
	return out, err
}

func (n *Node) removeFault(r *http.Request) (any, error) {
	id, err := faults.ParseID(r.PathValue("id"))
	if err != nil {
		return nil, badRequest("%v", err)
	}
	var out nodeapi.FaultInfo
	found := false
	err = n.loop.Do(context.WithoutCancel(r.Context()), func() {
		if _, found = n.fx.placed[id]; found {
			out = n.fx.info(id)
			n.fx.remove(id)
		}
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &httpError{http.StatusNotFound, fmt.Errorf("no fault %s", id)}
	}
	return out, nil
}

func (n *Node) clearFaults(r *http.Request) (any, error) {
	var out nodeapi.FaultsCleared
	err := n.loop.Do(context.WithoutCancel(r.Context()), func() { out.Cleared = n.fx.clear() })
	return out, err
}
