package node

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// job is one job of an endpoint node; it lives on the loop goroutine.
type job struct {
	id    int
	kind  string
	state nodeapi.JobState
	err   error
	qps   []*epQP
	perf  *perfJob
	coll  *collJob
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// addJob registers a job over qps (each usable by one job at a time).
func (ep *epState) addJob(kind string, ids []int) (*job, error) {
	ep.nextJb++
	j := &job{id: ep.nextJb, kind: kind, state: nodeapi.JobRunning}
	seen := map[int]bool{}
	for _, id := range ids {
		q := ep.qps[id]
		if q == nil {
			return nil, &httpError{http.StatusNotFound, fmt.Errorf("no qp %d", id)}
		}
		if seen[id] {
			return nil, badRequest("qp %d listed twice", id)
		}
		seen[id] = true
		if q.busy != 0 {
			if o := ep.jobs[q.busy]; o != nil && !o.finished() {
				return nil, &httpError{http.StatusConflict, fmt.Errorf("qp %d is used by job %d", id, q.busy)}
			}
		}
		j.qps = append(j.qps, q)
	}
	for _, q := range j.qps {
		q.busy = j.id
	}
	ep.jobs[j.id] = j
	// Forget old finished jobs beyond the last 64.
	if len(ep.jobs) > 64 {
		for _, id := range sortedKeys(ep.jobs)[:len(ep.jobs)-64] {
			if ep.jobs[id].finished() {
				delete(ep.jobs, id)
			}
		}
	}
	return j, nil
}

func (j *job) finished() bool { return j.state == nodeapi.JobDone || j.state == nodeapi.JobFailed }

// end finishes j with err (nil: done) and releases its QPs.
func (ep *epState) end(j *job, err error) {
	if j.finished() {
		return
	}
	j.state, j.err = nodeapi.JobDone, err
	if err != nil {
		j.state = nodeapi.JobFailed
	}
	for _, q := range j.qps {
		q.onWC = nil
	}
	// A finished job keeps its results, not its QPs and memory.
	if j.perf != nil {
		j.perf.free()
	}
	if j.coll != nil {
		j.coll.free()
	}
	j.qps = nil
	ep.bump()
}

func (ep *epState) status(j *job) nodeapi.JobStatus {
	s := nodeapi.JobStatus{ID: j.id, Kind: j.kind, State: j.state, FabricTime: ep.n.loop.Now()}
	s.Version, _ = ep.watch()
	if j.err != nil {
		s.Error = j.err.Error()
	}
	if j.perf != nil {
		r := j.perf.result()
		s.Perf = &r
	}
	if j.coll != nil {
		c := j.coll.status()
		s.Collective = &c
	}
	return s
}

// jobCall resolves {id} and runs f with the job on the loop goroutine,
// returning its status afterwards.
func (ep *epState) jobCall(r *http.Request, f func(*job) error) (nodeapi.JobStatus, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return nodeapi.JobStatus{}, badRequest("job id %q", r.PathValue("id"))
	}
	var out nodeapi.JobStatus
	err = ep.do(context.WithoutCancel(r.Context()), func() error {
		j := ep.jobs[id]
		if j == nil {
			return &httpError{http.StatusNotFound, fmt.Errorf("no job %d", id)}
		}
		if f != nil {
			if err := f(j); err != nil {
				return err
			}
		}
		out = ep.status(j)
		return nil
	})
	return out, err
}

// maxWait bounds a long poll of GET /jobs/{id}.
const maxWait = 5 * time.Second

func (ep *epState) getJob(r *http.Request) (any, error) {
	after := int64(-1)
	if a := r.URL.Query().Get("after"); a != "" {
		v, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return nil, badRequest("after %q", a)
		}
		after = int64(v)
	}
	wait := maxWait
	if w := r.URL.Query().Get("wait_ms"); w != "" {
		ms, err := strconv.Atoi(w)
		if err != nil || ms < 0 {
			return nil, badRequest("wait_ms %q", w)
		}
		wait = min(wait, time.Duration(ms)*time.Millisecond)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		_, changed := ep.watch()
		st, err := ep.jobCall(r, nil)
		if err != nil || after < 0 || int64(st.Version) > after || st.Finished() {
			return st, err
		}
		select {
		case <-changed:
		case <-deadline.C:
			return st, nil
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
}

func (ep *epState) stopJob(r *http.Request) (any, error) {
	return ep.jobCall(r, func(j *job) error {
		switch {
		case j.perf != nil:
			j.perf.stop()
		case j.coll != nil:
			if !j.finished() {
				j.coll.abort()
			}
		}
		return nil
	})
}

func (ep *epState) releaseBarrier(r *http.Request, req nodeapi.Release) (any, error) {
	return ep.jobCall(r, func(j *job) error {
		if j.coll == nil {
			return badRequest("job %d is not a collective", j.id)
		}
		return j.coll.release(req.Seq, ep.fabricAt(req.At))
	})
}

// fabricAt maps a wall-clock time (Unix ns) to the loop's fabric time,
// not before now.
func (ep *epState) fabricAt(unixNano int64) clock.Time {
	l := ep.n.loop
	now := l.Now()
	if unixNano == 0 {
		return now
	}
	t := clock.Time(time.Unix(0, unixNano).Sub(l.Start()).Nanoseconds() * int64(clock.Nanosecond) / int64(l.Scale()))
	return max(t, now)
}

// collect emits a job's samples.
func (j *job) collect(node string, emit func(telemetry.Sample)) {
	l := []telemetry.Label{{Name: "node", Value: node}, {Name: "job", Value: strconv.Itoa(j.id)}, {Name: "kind", Value: j.kind}}
	running := 0.0
	if !j.finished() {
		running = 1
	}
	emit(telemetry.Sample{Name: "job_running", Kind: telemetry.Gauge, Labels: l, Value: running})
	if j.perf != nil {
		r := j.perf.result()
		emit(telemetry.Sample{Name: "job_messages_total", Kind: telemetry.Counter, Labels: l, Value: float64(r.Messages)})
		emit(telemetry.Sample{Name: "job_bytes_total", Kind: telemetry.Counter, Labels: l, Value: float64(r.Bytes)})
	}
	if j.coll != nil {
		j.coll.Collect(func(s telemetry.Sample) {
			s.Labels = telemetry.With(l, s.Labels...)
			emit(s)
		})
	}
}
