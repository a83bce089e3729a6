package node

import (
	"context"
	"errors"
	"net/http"

	"github.com/rocelab/rocelab/endpoint/cmagent"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// The compliance adapter's CM operations (docs/compliance.md, "The CM
// operations"; nodeapi/cm.go): a NIC's Communication Manager driven by
// an auto-accepting consumer (package cmagent), made on the first call
// with the call's timeout and retries. A NIC whose CM already serves
// rdma_cm programs (the verbs server) refuses them (409), as does a
// call asking other timeouts than the running manager's.

func (ep *epState) cmRoutes(h func(string, func(*http.Request) (any, error))) {
	h("POST /cm/listen", withBody(ep.cmListen))
	h("POST /cm/connect", withBody(ep.cmConnect))
	h("GET /cm/events", ep.cmEvents)
	h("POST /cm/reset", withBody(ep.cmReset))
}

// onCM runs f on the loop goroutine with NIC nic's agent, made with spec
// if it has none (spec nil: none is made, and f gets nil).
func (ep *epState) onCM(r *http.Request, nic string, spec *cmagent.Spec, f func(a *cmagent.Agent) error) error {
	i := 0
	if nic != "" {
		var err error
		if i, err = ep.nicIndex(nic); err != nil {
			return err
		}
	}
	return ep.do(context.WithoutCancel(r.Context()), func() error {
		a := ep.cm[i]
		if a == nil && spec != nil {
			var err error
			if a, err = cmagent.New(ep.nics[i], *spec); err != nil {
				if errors.Is(err, cmagent.ErrBusy) {
					return &httpError{http.StatusConflict, err}
				}
				return badRequest("%v", err)
			}
			if ep.cm == nil {
				ep.cm = map[int]*cmagent.Agent{}
			}
			ep.cm[i] = a
		}
		err := f(a)
		if errors.Is(err, cmagent.ErrSpec) {
			return &httpError{http.StatusConflict, err}
		}
		return err
	})
}

func (ep *epState) cmListen(r *http.Request, req nodeapi.CMListen) (any, error) {
	return nodeapi.Empty{}, ep.onCM(r, req.NIC, &req.Spec, func(a *cmagent.Agent) error {
		if err := a.Listen(req.Listen); err != nil {
			return &httpError{http.StatusConflict, err}
		}
		return nil
	})
}

func (ep *epState) cmConnect(r *http.Request, req nodeapi.CMConnect) (any, error) {
	if !req.To.IsValid() {
		return nil, badRequest("connect: no address to connect to")
	}
	var out nodeapi.CMConnected
	return &out, ep.onCM(r, req.NIC, &req.Spec, func(a *cmagent.Agent) (err error) {
		out, err = a.Connect(req.Connect)
		return err
	})
}

func (ep *epState) cmEvents(r *http.Request) (any, error) {
	out := []nodeapi.CMEvent{}
	return &out, ep.onCM(r, r.URL.Query().Get("nic"), nil, func(a *cmagent.Agent) error {
		if a != nil {
			out = a.Events()
		}
		return nil
	})
}

func (ep *epState) cmReset(r *http.Request, req nodeapi.CMReset) (any, error) {
	return nodeapi.Empty{}, ep.onCM(r, req.NIC, nil, func(a *cmagent.Agent) error {
		if a != nil {
			a.Reset()
		}
		return nil
	})
}
