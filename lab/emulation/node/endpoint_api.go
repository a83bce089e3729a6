package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/adapter"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// The endpoint node's API, besides the routes every node has:
//
//	GET    /nics                 []NICInfo
//	POST   /qp                   QPRequest → QPInfo (a QP, its CQ and buffer)
//	GET    /qp/{id}              QPInfo
//	POST   /qp/{id}/connect      ConnectRequest → QPInfo (now RTS)
//	DELETE /qp/{id}              destroys the QP and deregisters its buffer
//	POST   /qps/delete           DeleteQPsRequest → QPsDeleted (many QPs in one loop turn)
//	POST   /owners/renew         RenewRequest → {} (an owner's lease runs on)
//	POST   /qp/{id}/send         WorkRequest → {} (the compliance adapter, adapter_api.go)
//	POST   /qp/{id}/recv         RecvRequest → {}
//	GET    /qp/{id}/completions  []Completion, drained
//	GET    /qp/{id}/mem?offset=O&len=N, PUT /qp/{id}/mem?offset=O   Mem
//	POST   /cm/listen, /cm/connect, /cm/reset; GET /cm/events   the adapter's CM operations (cm_adapter_api.go)
//	POST   /perf                 PerfRequest → JobStatus
//	POST   /collective           CollectiveRequest → JobStatus (set up)
//	POST   /jobs/{id}/start      CollectiveStart → JobStatus
//	POST   /jobs/{id}/release    Release → JobStatus (a collective barrier)
//	POST   /jobs/{id}/stop       JobStatus (ends a server perf job, checks data)
//	GET    /jobs/{id}?after=V[&wait_ms=W]  JobStatus, waiting (up to W ms, at most 5 s) for version > V

// maxBuffer bounds one QP's buffer.
const maxBuffer = nodeapi.MaxRegionBytes

func (ep *epState) routes(h func(string, func(*http.Request) (any, error))) {
	h("GET /nics", ep.listNICs)
	h("POST /qp", withBody(ep.createQP))
	h("GET /qp/{id}", ep.getQP)
	h("POST /qp/{id}/connect", withBody(ep.connectQP))
	h("DELETE /qp/{id}", ep.deleteQP)
	h("POST /qps/delete", withBody(ep.deleteQPs))
	h("POST /owners/renew", withBody(ep.renewOwner))
	ep.adapterRoutes(h)
	ep.cmRoutes(h)
	h("POST /perf", withBody(ep.startPerf))
	h("POST /collective", withBody(ep.setupCollective))
	h("POST /jobs/{id}/start", withBody(ep.startCollective))
	h("POST /jobs/{id}/release", withBody(ep.releaseBarrier))
	h("POST /jobs/{id}/stop", ep.stopJob)
	h("GET /jobs/{id}", ep.getJob)
}

func (ep *epState) listNICs(*http.Request) (any, error) {
	out := []nodeapi.NICInfo{}
	for i, nc := range ep.n.cfg.NICs {
		out = append(out, nodeapi.NICInfo{Index: i, Name: nc.Name, IfName: ep.n.cfg.Ports[i].IfName, IP: nc.IP,
			MAC: fmtMAC(ep.n.loop.PortMAC(ep.n.base + i)), MTU: max(nc.MTU, 0), Rate: int64(ep.n.cfg.Ports[i].Rate)})
		if out[i].MTU == 0 {
			out[i].MTU = 4096
		}
	}
	return out, nil
}

// do runs f on the loop goroutine; f's error is the call's.
func (ep *epState) do(ctx context.Context, f func() error) error {
	var ferr error
	if err := ep.n.loop.Do(ctx, func() { ferr = f() }); err != nil {
		return err
	}
	return ferr
}

func (ep *epState) createQP(r *http.Request, req nodeapi.QPRequest) (any, error) {
	i, err := 0, error(nil) // the adapter names no NIC: the node's first
	if req.NIC != "" {
		if i, err = ep.nicIndex(req.NIC); err != nil {
			return nil, err
		}
	}
	mode := req.Mode
	typ, err := adapter.QPType(req.Type)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if req.CC == "" {
		req.CC = "none"
	}
	if _, err := endpoint.CCRegistry().Get(req.CC); err != nil {
		return nil, badRequest("%v", err)
	}
	if req.Buffer < 0 || req.Buffer > maxBuffer {
		return nil, badRequest("buffer_bytes %d out of [0, %d]", req.Buffer, maxBuffer)
	}
	var buf []byte
	if req.Buffer > 0 {
		buf = allocBuffer(int(req.Buffer))
	}
	var out nodeapi.QPInfo
	err = ep.do(context.WithoutCancel(r.Context()), func() error {
		if req.Owner != "" && ep.closed[req.Owner] {
			return &httpError{http.StatusConflict, fmt.Errorf("owner %s has finished: no more QPs for it", req.Owner)}
		}
		if n := ep.qpsOn(i) + ep.verbs.QPs(i); n >= nodeapi.MaxQPsPerNIC {
			return &httpError{http.StatusConflict, fmt.Errorf("NIC %s has %d QPs, its limit: delete some (or end the jobs that hold them) first", ep.n.cfg.NICs[i].Name, n)}
		}
		if req.Owner != "" && req.LeaseMS > 0 {
			ep.lease(req.Owner, time.Duration(req.LeaseMS)*time.Millisecond)
		}
		q := &epQP{nic: i, cq: ep.nics[i].CreateCQ(0), buf: buf, owner: req.Owner}
		q.cq.OnCompletion(func(wc endpoint.WC) {
			if q.onWC != nil {
				q.onWC(wc)
				return
			}
			q.keep(wc)
		})
		cfg := endpoint.QPConfig{SendCQ: q.cq, RecvCQ: q.cq, Mode: mode, CC: req.CC, Paths: req.Paths, Type: typ, QKey: req.QKey}
		if req.PSN != nil {
			cfg.PSN, cfg.HasPSN = *req.PSN, true
		}
		qp, err := ep.pds[i].CreateQP(cfg)
		if err != nil {
			return badRequest("create qp: %v", err)
		}
		if buf != nil {
			if q.mr, err = ep.pds[i].RegMR(buf, adapter.AccessFor(req.NoRemoteAtomic)); err != nil {
				qp.Destroy()
				return fmt.Errorf("register buffer: %w", err)
			}
		}
		q.qp = qp
		ep.nextQP++
		q.id = ep.nextQP
		ep.qps[q.id] = q
		out = ep.qpInfo(q)
		return nil
	})
	return out, err
}

// qpsOn counts the QPs of NIC i (loop goroutine).
func (ep *epState) qpsOn(i int) int {
	n := 0
	for _, q := range ep.qps {
		if q.nic == i {
			n++
		}
	}
	return n
}

func (ep *epState) qpInfo(q *epQP) nodeapi.QPInfo {
	info := nodeapi.QPInfo{ID: q.id, NIC: ep.n.cfg.NICs[q.nic].Name, QPN: q.qp.QPN(), State: q.qp.State().String(),
		Mode: q.qp.Mode(), Conn: q.qp.Info()}
	if q.mr != nil {
		info.Buffer = nodeapi.BufferInfo{Addr: q.mr.Addr, RKey: q.mr.RKey, Len: int64(len(q.buf))}
	}
	if err := q.qp.Err(); err != nil {
		info.Error = err.Error()
	}
	return info
}

// qpByID resolves {id} on the loop goroutine.
func (ep *epState) qpByID(r *http.Request) (func() (*epQP, error), error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return nil, badRequest("qp id %q", r.PathValue("id"))
	}
	return func() (*epQP, error) {
		q := ep.qps[id]
		if q == nil {
			return nil, &httpError{http.StatusNotFound, fmt.Errorf("no qp %d", id)}
		}
		return q, nil
	}, nil
}

func (ep *epState) getQP(r *http.Request) (any, error) {
	get, err := ep.qpByID(r)
	if err != nil {
		return nil, err
	}
	var out nodeapi.QPInfo
	return out, ep.do(r.Context(), func() error {
		q, err := get()
		if err == nil {
			out = ep.qpInfo(q)
		}
		return err
	})
}

func (ep *epState) connectQP(r *http.Request, req nodeapi.ConnectRequest) (any, error) {
	get, err := ep.qpByID(r)
	if err != nil {
		return nil, err
	}
	if !req.Remote.IP.IsValid() {
		return nil, badRequest("remote: no IP")
	}
	var out nodeapi.QPInfo
	return out, ep.do(context.WithoutCancel(r.Context()), func() error {
		q, err := get()
		if err != nil {
			return err
		}
		if err := q.qp.Connect(req.Remote); err != nil {
			return &httpError{http.StatusConflict, fmt.Errorf("connect qp %d: %w", q.id, err)}
		}
		q.remote, q.peer = req.RemoteBuffer, req.Remote.IP
		out = ep.qpInfo(q)
		return nil
	})
}

func (ep *epState) deleteQP(r *http.Request) (any, error) {
	get, err := ep.qpByID(r)
	if err != nil {
		return nil, err
	}
	return map[string]string{"status": "deleted"}, ep.do(context.WithoutCancel(r.Context()), func() error {
		q, err := get()
		if err != nil {
			return err
		}
		return ep.destroyQP(q)
	})
}

// deleteQPs is POST /qps/delete: every QP of the list that exists and no
// running job holds, in one turn of the loop (a perf of thousands of QPs
// cleans up in one call, also when it was interrupted).
func (ep *epState) deleteQPs(r *http.Request, req nodeapi.DeleteQPsRequest) (any, error) {
	var out nodeapi.QPsDeleted
	err := ep.do(context.WithoutCancel(r.Context()), func() error {
		ids := req.IDs
		if req.Owner != "" {
			ep.closeOwner(req.Owner)
			delete(ep.leases, req.Owner)
			for _, id := range sortedKeys(ep.qps) {
				if ep.qps[id].owner == req.Owner {
					ids = append(ids, id)
				}
			}
		}
		var errs []error
		for _, id := range ids {
			q := ep.qps[id]
			if q == nil {
				continue // gone already: deleting is idempotent
			}
			if err := ep.destroyQP(q); err != nil {
				errs = append(errs, err)
				continue
			}
			out.Deleted++
		}
		if len(errs) > 0 {
			return &httpError{http.StatusConflict, errors.Join(errs...)}
		}
		return nil
	})
	return out, err
}

// renewOwner is POST /owners/renew.
func (ep *epState) renewOwner(r *http.Request, req nodeapi.RenewRequest) (any, error) {
	if req.Owner == "" || req.LeaseMS <= 0 {
		return nil, badRequest("renew: an owner and a positive lease_ms are required")
	}
	return struct{}{}, ep.do(context.WithoutCancel(r.Context()), func() error {
		if ep.closed[req.Owner] {
			return &httpError{http.StatusConflict, fmt.Errorf("owner %s has finished", req.Owner)}
		}
		ep.lease(req.Owner, time.Duration(req.LeaseMS)*time.Millisecond)
		return nil
	})
}

// lease makes owner's lease run d from now (loop goroutine).
func (ep *epState) lease(owner string, d time.Duration) {
	if ep.leases == nil {
		ep.leases = map[string]time.Time{}
	}
	if end := time.Now().Add(d); end.After(ep.leases[owner]) {
		ep.leases[owner] = end
	}
}

// expireLeases stops the jobs and deletes the QPs of every owner whose
// lease ran out (loop goroutine; the node calls it twice a second). An
// owner whose jobs do not stop at once is tried again on the next call.
func (ep *epState) expireLeases(now time.Time) {
	for owner, end := range ep.leases {
		if now.Before(end) {
			continue
		}
		ep.closeOwner(owner)
		left := 0
		for _, id := range sortedKeys(ep.qps) {
			q := ep.qps[id]
			if q.owner != owner {
				continue
			}
			if j := ep.jobs[q.busy]; q.busy != 0 && j != nil && !j.finished() {
				if j.perf != nil {
					j.perf.stop()
				} else if j.coll != nil {
					j.coll.abort()
				}
			}
			if ep.destroyQP(q) != nil {
				left++
			}
		}
		if left == 0 {
			delete(ep.leases, owner)
			ep.n.log.Warn("an owner's lease ran out: its QPs are deleted", "owner", owner)
		}
	}
}

// sweepLeases runs expireLeases on the loop twice a second until ctx ends.
func (ep *epState) sweepLeases(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			ep.n.loop.Post(func() { ep.expireLeases(now) })
		}
	}
}

// maxClosedOwners bounds how many finished owners a node remembers.
const maxClosedOwners = 1024

// closeOwner marks owner finished (loop goroutine).
func (ep *epState) closeOwner(owner string) {
	if ep.closed == nil {
		ep.closed = map[string]bool{}
	}
	if ep.closed[owner] {
		return
	}
	ep.closed[owner] = true
	ep.closedOrder = append(ep.closedOrder, owner)
	if len(ep.closedOrder) > maxClosedOwners {
		delete(ep.closed, ep.closedOrder[0])
		ep.closedOrder = ep.closedOrder[1:]
	}
}

// destroyQP destroys q and its buffer's registration unless a running job
// holds it (loop goroutine).
func (ep *epState) destroyQP(q *epQP) error {
	if q.busy != 0 {
		if j := ep.jobs[q.busy]; j != nil && j.state == nodeapi.JobRunning {
			return &httpError{http.StatusConflict, fmt.Errorf("qp %d is used by running job %d", q.id, q.busy)}
		}
	}
	q.onWC = nil
	q.qp.Destroy()
	if q.mr != nil {
		q.mr.Dereg()
	}
	delete(ep.qps, q.id)
	return nil
}

// Collect emits the jobs' samples (labels node, job, kind).
func (ep *epState) Collect(emit func(telemetry.Sample)) {
	for _, id := range sortedKeys(ep.jobs) {
		ep.jobs[id].collect(ep.n.cfg.Name, emit)
	}
}
