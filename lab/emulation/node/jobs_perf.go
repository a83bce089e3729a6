package node

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire"
)

type perfJob struct {
	ep       *epState
	j        *job
	req      nodeapi.PerfRequest
	client   bool
	wr       endpoint.WROpcode
	qps      []*perfQP
	left     int
	start    clock.Time
	end      clock.Time
	deadline clock.Time
	msgs     int64
	done     []clock.Time // completion times (client, bandwidth), capped
	rate     clock.Rate   // the line rate of the QPs' NIC
	// onWire is the bytes a message occupies on the wire at the QPs'
	// path MTU, headers and frame overhead included.
	onWire int
	lats   []clock.Duration
	// fcts holds every message's completion time, post to completion
	// (a bandwidth client's), as the simulator's perf flows keep them.
	fcts fct.Dist
	// window is what a timed client completed by its deadline: its
	// goodput, as perftest -D measures it, is that over the duration
	// (the simulator counts what arrived: the server's windowRx).
	windowMsgs, windowBytes int64
	checked                 bool
	// begun says the client has posted (at req.At); before, it waits.
	begun bool
	// A timed server given the window's start (req.At) records the data
	// its QPs received by the window's end: windowRx, once windowEnded.
	windowRx    int64
	windowEnded bool
	wrong       int64
	stopped     bool
	// After free: what the QPs received when the job ended (the QPs and
	// their buffers are let go then).
	freed          bool
	rxWire, rxData int64
}

type perfQP struct {
	p        *perfJob
	q        *epQP
	idx      int
	posted   int
	done     int
	sent     clock.Time
	finished bool
	// sentAt is when each message in flight was posted, by its number
	// modulo the tx depth: an RC QP completes its messages in order.
	sentAt []clock.Time
}

// maxSamples caps the completion times and latencies a job keeps.
const maxSamples = 1 << 20

func (ep *epState) startPerf(r *http.Request, req nodeapi.PerfRequest) (any, error) {
	perftest.Defaults(&req.Op, &req.Size, &req.Iterations, req.Duration > 0)
	if req.Duration > 0 {
		req.Iterations = 0
	}
	if req.TxDepth <= 0 {
		req.TxDepth = perftest.DefaultTxDepth
	}
	if req.Latency {
		req.TxDepth = 1
	}
	p := &perfJob{ep: ep, req: req}
	switch req.Role {
	case "client":
		p.client = true
	case "server":
	default:
		return nil, badRequest("role %q: want client or server", req.Role)
	}
	op, err := perftest.ParseOp(req.Op)
	if err != nil {
		return nil, badRequest("op %q: want write, read or send", req.Op)
	}
	p.wr = op.Opcode(req.Latency)
	if len(req.QPs) == 0 {
		return nil, badRequest("no qps")
	}
	var out nodeapi.JobStatus
	err = ep.do(r.Context(), func() error {
		j, err := ep.addJob("perf", req.QPs)
		if err != nil {
			ep.nextJb--
			return err
		}
		p.j, j.perf = j, p
		if err := p.begin(); err != nil {
			delete(ep.jobs, j.id)
			for _, q := range j.qps {
				q.busy, q.onWC = 0, nil
			}
			return badRequest("%v", err)
		}
		ep.bump()
		out = ep.status(j)
		return nil
	})
	return out, err
}

// begin checks the QPs, fills the buffers and starts (loop goroutine).
func (p *perfJob) begin() error {
	req := p.req
	for i, q := range p.j.qps {
		if q.qp.State() != endpoint.StateRTS {
			return fmt.Errorf("qp %d is %v, not connected", q.id, q.qp.State())
		}
		if int64(len(q.buf)) < int64(req.Size) {
			return fmt.Errorf("qp %d: buffer of %d bytes for %d-byte messages", q.id, len(q.buf), req.Size)
		}
		needRemote := p.client && req.Op != "send" || !p.client && req.Latency && req.Op == "write"
		if needRemote && q.remote.Len < int64(req.Size) {
			return fmt.Errorf("qp %d: peer buffer of %d bytes for %d-byte messages", q.id, q.remote.Len, req.Size)
		}
		pq := &perfQP{p: p, q: q, idx: i, sentAt: make([]clock.Time, req.TxDepth)}
		p.qps = append(p.qps, pq)
		p.rate = p.ep.nics[q.nic].LineRate()
		p.onWire = wire.MessageOnWire(req.Size, q.qp.PathMTU(), firstExt(req.Op))
		if p.client != (req.Op == "read") {
			fillPattern(q.buf[:req.Size], req.Seed, i)
		} else {
			clear(q.buf[:req.Size])
		}
		if p.client {
			q.onWC = pq.clientWC
		} else {
			q.onWC = pq.serverWC
		}
	}
	p.left = len(p.qps)
	if !p.client && req.Duration > 0 && req.At > 0 {
		p.ep.n.loop.At(req.At.Add(req.Duration), func() {
			if !p.j.finished() {
				_, p.windowRx = p.received()
				p.windowEnded = true
			}
		})
	}
	if p.client && req.At > p.ep.n.loop.Now() {
		p.ep.n.loop.At(req.At, func() {
			if p.stopped || p.j.finished() {
				return
			}
			if err := p.post(); err != nil {
				p.ep.end(p.j, err)
			}
		})
		return nil
	}
	return p.post()
}

// post starts the job: its receives, and a client's first messages (at
// req.At, or now).
func (p *perfJob) post() error {
	req := p.req
	p.begun = true
	p.start = p.ep.n.loop.Now()
	if req.Duration > 0 {
		p.deadline = p.start.Add(req.Duration)
	}
	for _, pq := range p.qps {
		// Receives: SEND needs them at the server, ping-pong at both ends.
		recvs := 0
		switch {
		case req.Latency && req.Op != "read":
			recvs = 2
		case !p.client && req.Op == "send":
			recvs = req.TxDepth + 1
		}
		for range recvs {
			if err := pq.recv(); err != nil {
				return err
			}
		}
		if p.client {
			for pq.more() && pq.posted < req.TxDepth {
				if err := pq.post(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (pq *perfQP) recv() error {
	q := pq.q
	return q.qp.PostRecv(endpoint.RecvWR{Local: endpoint.SGE{Addr: q.mr.Addr, Length: uint32(pq.p.req.Size), LKey: q.mr.LKey}})
}

// more reports whether the client may post another message.
func (pq *perfQP) more() bool {
	p := pq.p
	if p.stopped {
		return false
	}
	if p.req.Duration > 0 {
		return p.ep.n.loop.Now() < p.deadline
	}
	return pq.posted < p.req.Iterations
}

func (pq *perfQP) post() error {
	p, q := pq.p, pq.q
	pq.sent = p.ep.n.loop.Now()
	pq.sentAt[pq.posted%len(pq.sentAt)] = pq.sent
	pq.posted++
	return q.qp.PostSend(endpoint.SendWR{Opcode: p.wr, Signaled: true,
		Local:      endpoint.SGE{Addr: q.mr.Addr, Length: uint32(p.req.Size), LKey: q.mr.LKey},
		RemoteAddr: q.remote.Addr, RKey: q.remote.RKey})
}

func (pq *perfQP) failed(wc endpoint.WC) bool {
	if wc.Status == endpoint.StatusSuccess {
		return false
	}
	err := fmt.Errorf("qp %d: %v completion: %v", pq.q.id, wc.Opcode, wc.Status)
	if wc.Err != nil {
		err = fmt.Errorf("%w: %v", err, wc.Err)
	}
	pq.p.ep.end(pq.p.j, err)
	return true
}

func (pq *perfQP) clientWC(wc endpoint.WC) {
	p := pq.p
	if pq.failed(wc) {
		return
	}
	now := p.ep.n.loop.Now()
	isRecv := wc.Opcode == endpoint.WCRecv || wc.Opcode == endpoint.WCRecvWriteImm
	switch {
	case p.req.Latency && p.req.Op != "read" && !isRecv:
		return // the send side of a ping; its pong completes the message
	case p.req.Latency && p.req.Op != "read":
		p.lat(now.Sub(pq.sent) / 2)
		if err := pq.recv(); err != nil {
			p.ep.end(p.j, err)
			return
		}
	case p.req.Latency:
		p.lat(now.Sub(pq.sent))
	default:
		p.fcts.Add(now.Sub(pq.sentAt[pq.done%len(pq.sentAt)]))
	}
	if p.req.Duration > 0 && now <= p.deadline {
		p.windowMsgs++
		p.windowBytes += int64(p.req.Size)
	}
	pq.done++
	p.msgs++
	if len(p.done) < maxSamples {
		p.done = append(p.done, now)
	}
	if pq.more() {
		if err := pq.post(); err != nil {
			p.ep.end(p.j, err)
		}
		return
	}
	if pq.done == pq.posted && !pq.finished {
		pq.finished = true
		p.left--
		if p.left == 0 {
			p.finish(now)
		}
	}
}

func (p *perfJob) lat(d clock.Duration) {
	if len(p.lats) < maxSamples {
		p.lats = append(p.lats, d)
	}
}

func (p *perfJob) finish(now clock.Time) {
	p.end = now
	if p.req.Op == "read" {
		p.check()
	}
	p.ep.end(p.j, nil)
}

func (pq *perfQP) serverWC(wc endpoint.WC) {
	p := pq.p
	if pq.failed(wc) {
		return
	}
	if wc.Opcode != endpoint.WCRecv && wc.Opcode != endpoint.WCRecvWriteImm {
		return // a pong's own completion
	}
	p.msgs++
	if err := pq.recv(); err != nil {
		p.ep.end(p.j, err)
		return
	}
	if p.req.Latency {
		if err := pq.post(); err != nil { // the pong
			p.ep.end(p.j, err)
		}
	}
}

// check compares the received buffers with the pattern.
func (p *perfJob) check() {
	p.checked, p.wrong = true, 0
	want := make([]byte, p.req.Size)
	for i, pq := range p.qps {
		fillPattern(want, p.req.Seed, i)
		p.wrong += countDiff(pq.q.buf[:p.req.Size], want)
	}
}

// stop ends a server job (checking what a WRITE or SEND delivered) or
// aborts a running client job.
func (p *perfJob) stop() {
	if p.j.finished() {
		return
	}
	p.stopped = true
	p.end = p.ep.n.loop.Now()
	if p.client {
		p.ep.end(p.j, errors.New("stopped"))
		return
	}
	if p.req.Op != "read" {
		p.check()
	}
	p.ep.end(p.j, nil)
}

// received sums what the job's QPs received: on the wire, and as data.
func (p *perfJob) received() (wire, data int64) {
	if p.freed {
		return p.rxWire, p.rxData
	}
	for _, pq := range p.qps {
		st := pq.q.qp.Stats()
		wire += st.RxBytes
		data += st.RxDataBytes
	}
	return wire, data
}

// free keeps the QPs' totals and lets go of the QPs once the job ended: a
// node keeps its last finished jobs (addJob), not their buffers.
func (p *perfJob) free() {
	if p.freed {
		return
	}
	p.rxWire, p.rxData = p.received()
	p.freed = true
	for _, pq := range p.qps {
		pq.q = nil
	}
}

func (p *perfJob) result() nodeapi.PerfResult {
	req := p.req
	r := nodeapi.PerfResult{Role: req.Role, Op: req.Op, Latency: req.Latency, Size: req.Size, QPs: len(p.qps),
		Iterations: req.Iterations, Messages: p.msgs, Start: p.start, End: p.end, Checked: p.checked, WrongBytes: p.wrong}
	rxWire, data := p.received()
	r.RxWire = rxWire
	if !p.client {
		r.Bytes = data
		if p.windowEnded {
			r.WindowBytes = p.windowRx
		}
	}
	if p.client {
		r.Bytes = p.msgs * int64(req.Size)
	}
	now := p.ep.n.loop.Now()
	if !p.begun {
		return r // a client waiting for req.At
	}
	switch {
	case p.j.finished():
		r.Progress = 1
	case req.Duration > 0:
		r.Progress = min(1, float64(now.Sub(p.start))/float64(req.Duration))
	case req.Iterations > 0 && len(p.qps) > 0 && p.client:
		r.Progress = float64(p.msgs) / float64(req.Iterations*len(p.qps))
	}
	end := p.end
	if !p.j.finished() {
		end = now
	}
	r.Duration = end.Sub(p.start)
	if s := r.Duration.Seconds(); s > 0 && p.client {
		r.BWAvg = float64(r.Bytes) * 8 / s / 1e9
		r.MsgRate = float64(p.msgs) / s / 1e6
		if w := req.Duration.Seconds(); w > 0 && !req.Latency && now >= p.deadline {
			// A timed job: what completed within its window, over the
			// window (perftest -D), not
			// counting the drain of the messages still queued at its end.
			r.BWAvg = float64(p.windowBytes) * 8 / w / 1e9
			r.MsgRate = float64(p.windowMsgs) / w / 1e6
		}
		r.BWPeak = max(peakGbps(p.done, p.start, p.req.Size, p.onWire, p.rate), r.BWAvg)
	}
	if p.client && p.j.finished() && p.fcts.Count() > 0 {
		d := p.fcts
		r.FCT = &d
	}
	if len(p.lats) > 0 {
		l := slices.Clone(p.lats)
		slices.Sort(l)
		var sum clock.Duration
		for _, d := range l {
			sum += d
		}
		q := func(f float64) clock.Duration { return l[min(len(l)-1, int(f*float64(len(l))))] }
		r.Lat = &nodeapi.LatencyStats{Min: l[0], Typical: l[len(l)/2], Avg: sum / clock.Duration(len(l)), Max: l[len(l)-1], P99: q(0.99), P999: q(0.999)}
	}
	return r
}

// peakGbps is the best goodput, in Gb/s, of size-byte messages completed
// at times d (sorted) since start, over windows (t_i, t_j] that span at
// least a tenth of the run. Completions are stamped with the fabric time
// of the loop turn that delivered them, so when the loop falls behind
// they arrive in bunches, and a window's span understates the time its
// messages took: a window lasts at least the time its messages take on
// the wire at line rate (when known), each onWire bytes with its headers
// and frame overhead at the path MTU, so the peak cannot exceed the
// goodput the link carries (a perf reported 553 Gb/s on a 400G link, then
// 400.00 Gb/s, the line rate, where 4096-byte packets carry at most
// 392.15 Gb/s of payload). The average has no such problem: its end can
// only be late.
func peakGbps(d []clock.Time, start clock.Time, size, onWire int, rate clock.Rate) float64 {
	n := len(d)
	if n < 2 {
		return 0
	}
	onWire = max(onWire, size)
	span := d[n-1].Sub(start) / 10
	best := 0.0
	j := 0
	for i := range n {
		if i+1 < n && d[i+1] == d[i] {
			continue // start windows after the last of a bunch
		}
		for j < n && d[j].Sub(d[i]) < span {
			j++
		}
		for j+1 < n && d[j+1] == d[j] {
			j++
		}
		if j >= n {
			break
		}
		bits := float64(j-i) * float64(size) * 8
		dt := d[j].Sub(d[i]).Seconds()
		if rate > 0 {
			dt = max(dt, float64(j-i)*float64(onWire)*8/float64(rate))
		}
		if dt > 0 {
			best = max(best, bits/dt/1e9)
		}
	}
	return best
}

// firstExt is the extension headers in the first packet of a perf
// message that carries data: a WRITE's RETH, a READ response's AETH, none
// for a SEND.
func firstExt(op string) int {
	switch op {
	case "send":
		return 0
	case "read":
		return wire.AETHLen
	}
	return wire.RETHLen
}

// fillPattern fills b with the bytes of pattern (seed, idx): a SplitMix64
// stream, never all zero.
func fillPattern(b []byte, seed uint64, idx int) {
	x := seed*0x9E3779B97F4A7C15 + uint64(idx)*0xBF58476D1CE4E5B9 + 1
	for i := 0; i < len(b); i += 8 {
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		for k := 0; k < 8 && i+k < len(b); k++ {
			b[i+k] = byte(z >> (8 * k))
		}
	}
}

// countDiff counts the bytes where got and want (of equal length)
// differ: a chunk at a time with bytes.Equal (vectorised), byte by byte
// only in the chunks that differ, so that checking a large, correct
// buffer on the loop goroutine stays short.
func countDiff(got, want []byte) int64 {
	const chunk = 4096
	var n int64
	for off := 0; off < len(got); off += chunk {
		g, w := got[off:min(off+chunk, len(got))], want[off:min(off+chunk, len(want))]
		if bytes.Equal(g, w) {
			continue
		}
		for k := range g {
			if g[k] != w[k] {
				n++
			}
		}
	}
	return n
}
