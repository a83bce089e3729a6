package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/adapter"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// The compliance adapter (docs/compliance.md): verbs on one QP created
// with POST /qp, for a tester that plays the QP's peer on the wire.
//
//	POST /qp/{id}/send         WorkRequest → {} (every WR signaled)
//	POST /qp/{id}/recv         RecvRequest → {}
//	GET  /qp/{id}/completions  []Completion, drained
//	GET  /qp/{id}/mem?offset=O&len=N   Mem
//	PUT  /qp/{id}/mem?offset=O         Mem → {}
//
// A QP that a perf or collective job uses refuses them (409).

// maxKeptWCs bounds the completions a QP keeps for the adapter; older ones
// are dropped first.
const maxKeptWCs = 1 << 16

// keep queues wc for GET completions (loop goroutine).
func (q *epQP) keep(wc endpoint.WC) {
	if len(q.wcs) >= maxKeptWCs {
		q.wcs = q.wcs[1:]
	}
	q.wcs = append(q.wcs, wc)
}

func (ep *epState) adapterRoutes(h func(string, func(*http.Request) (any, error))) {
	h("POST /qp/{id}/send", withBody(ep.postSend))
	h("POST /qp/{id}/recv", withBody(ep.postRecv))
	h("GET /qp/{id}/completions", ep.completions)
	h("GET /qp/{id}/mem", ep.readMem)
	h("PUT /qp/{id}/mem", ep.writeMem)
}

// onAdapterQP runs f on the loop goroutine with QP {id}, which must have
// no job, and answers f's refusal with its status: 400 for a bad operation
// or span, 409 for a QP that cannot take it.
func (ep *epState) onAdapterQP(r *http.Request, f func(q *epQP) error) error {
	get, err := ep.qpByID(r)
	if err != nil {
		return err
	}
	return ep.do(context.WithoutCancel(r.Context()), func() error {
		q, err := get()
		if err != nil {
			return err
		}
		if q.busy != 0 {
			if j := ep.jobs[q.busy]; j != nil && !j.finished() {
				return &httpError{http.StatusConflict, fmt.Errorf("qp %d is used by job %d", q.id, q.busy)}
			}
		}
		err = f(q)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, adapter.ErrUnknownOp), errors.Is(err, adapter.ErrOutside):
			return &httpError{http.StatusBadRequest, fmt.Errorf("qp %d: %w", q.id, err)}
		default:
			return &httpError{http.StatusConflict, fmt.Errorf("qp %d: %w", q.id, err)}
		}
	})
}

// verbs is q as the adapter drives it.
func (q *epQP) verbs() adapter.QP { return adapter.QP{QP: q.qp, MR: q.mr, Buf: q.buf, Peer: q.peer} }

func (ep *epState) postSend(r *http.Request, wr nodeapi.WorkRequest) (any, error) {
	if _, err := adapter.Opcode(wr.Op); err != nil {
		return nil, badRequest("%v", err) // before the loop is asked
	}
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error { return q.verbs().PostSend(wr) })
}

func (ep *epState) postRecv(r *http.Request, wr nodeapi.RecvRequest) (any, error) {
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error { return q.verbs().PostRecv(wr) })
}

func (ep *epState) completions(r *http.Request) (any, error) {
	out := []nodeapi.Completion{}
	return out, ep.onAdapterQP(r, func(q *epQP) error {
		for _, wc := range q.wcs {
			out = append(out, adapter.CompletionOf(wc))
		}
		q.wcs = nil
		return nil
	})
}

// memQuery parses offset (and len when withLen) of a mem request.
func memQuery(r *http.Request, withLen bool) (off, n uint64, err error) {
	q := r.URL.Query()
	if off, err = strconv.ParseUint(q.Get("offset"), 10, 64); err != nil {
		return 0, 0, badRequest("offset %q: want a byte offset", q.Get("offset"))
	}
	if withLen {
		if n, err = strconv.ParseUint(q.Get("len"), 10, 32); err != nil || n > 64<<20 {
			return 0, 0, badRequest("len %q: want a length up to 64 MiB", q.Get("len"))
		}
	}
	return off, n, nil
}

func (ep *epState) readMem(r *http.Request) (any, error) {
	off, n, err := memQuery(r, true)
	if err != nil {
		return nil, err
	}
	var out nodeapi.Mem
	return &out, ep.onAdapterQP(r, func(q *epQP) (err error) {
		out.Data, err = q.verbs().Read(off, n)
		return err
	})
}

func (ep *epState) writeMem(r *http.Request) (any, error) {
	off, _, err := memQuery(r, false)
	if err != nil {
		return nil, err
	}
	var in nodeapi.Mem
	if err := decodeLimit(r, &in, 96<<20); err != nil {
		return nil, err
	}
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error { return q.verbs().Write(off, in.Data) })
}
