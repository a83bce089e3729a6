package node

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/nodeapi"
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

// adapterOps maps the adapter's operation names to verbs.
var adapterOps = map[string]endpoint.WROpcode{"send": endpoint.WRSend, "send_imm": endpoint.WRSendImm,
	"write": endpoint.WRWrite, "write_imm": endpoint.WRWriteImm, "read": endpoint.WRRead}

func (ep *epState) adapterRoutes(h func(string, func(*http.Request) (any, error))) {
	h("POST /qp/{id}/send", ep.postSend)
	h("POST /qp/{id}/recv", ep.postRecv)
	h("GET /qp/{id}/completions", ep.completions)
	h("GET /qp/{id}/mem", ep.readMem)
	h("PUT /qp/{id}/mem", ep.writeMem)
}

// onAdapterQP runs f on the loop goroutine with QP {id}, which must have a
// buffer and no job.
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
		if q.mr == nil {
			return &httpError{http.StatusConflict, fmt.Errorf("qp %d has no buffer (create it with buffer_bytes)", q.id)}
		}
		return f(q)
	})
}

// span checks [off, off+n) against q's buffer.
func (q *epQP) span(off uint64, n uint64) error {
	if off > uint64(len(q.buf)) || n > uint64(len(q.buf))-off {
		return badRequest("[%d, %d) is outside qp %d's %d-byte buffer", off, off+n, q.id, len(q.buf))
	}
	return nil
}

func (ep *epState) postSend(r *http.Request) (any, error) {
	var wr nodeapi.WorkRequest
	if err := decode(r, &wr); err != nil {
		return nil, err
	}
	op, ok := adapterOps[wr.Op]
	if !ok {
		return nil, badRequest("op %q: want send, send_imm, write, write_imm or read", wr.Op)
	}
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error {
		if err := q.span(wr.Offset, uint64(wr.Len)); err != nil {
			return err
		}
		err := q.qp.PostSend(endpoint.SendWR{WRID: wr.WRID, Opcode: op, Signaled: true, RemoteAddr: wr.RemoteAddr, RKey: wr.RKey, Imm: wr.Imm,
			Local: endpoint.SGE{Addr: q.mr.Addr + wr.Offset, Length: wr.Len, LKey: q.mr.LKey}})
		if err != nil {
			return &httpError{http.StatusConflict, fmt.Errorf("post send on qp %d: %w", q.id, err)}
		}
		return nil
	})
}

func (ep *epState) postRecv(r *http.Request) (any, error) {
	var wr nodeapi.RecvRequest
	if err := decode(r, &wr); err != nil {
		return nil, err
	}
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error {
		if err := q.span(wr.Offset, uint64(wr.Len)); err != nil {
			return err
		}
		err := q.qp.PostRecv(endpoint.RecvWR{WRID: wr.WRID, Local: endpoint.SGE{Addr: q.mr.Addr + wr.Offset, Length: wr.Len, LKey: q.mr.LKey}})
		if err != nil {
			return &httpError{http.StatusConflict, fmt.Errorf("post recv on qp %d: %w", q.id, err)}
		}
		return nil
	})
}

func (ep *epState) completions(r *http.Request) (any, error) {
	out := []nodeapi.Completion{}
	return out, ep.onAdapterQP(r, func(q *epQP) error {
		for _, wc := range q.wcs {
			c := nodeapi.Completion{WRID: wc.WRID, Status: wc.Status.String(), Opcode: wc.Opcode.String(), ByteLen: wc.ByteLen, Imm: wc.Imm}
			if wc.Err != nil {
				c.Error = wc.Err.Error()
			}
			out = append(out, c)
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
	return &out, ep.onAdapterQP(r, func(q *epQP) error {
		if err := q.span(off, n); err != nil {
			return err
		}
		out.Data = append([]byte{}, q.buf[off:off+n]...)
		return nil
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
	return nodeapi.Empty{}, ep.onAdapterQP(r, func(q *epQP) error {
		if err := q.span(off, uint64(len(in.Data))); err != nil {
			return err
		}
		copy(q.buf[off:], in.Data)
		return nil
	})
}
