package nodeapi

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// NICs is GET /nics on an endpoint node.
func (c *Client) NICs(ctx context.Context) ([]NICInfo, error) {
	var out []NICInfo
	return out, c.call(ctx, http.MethodGet, "/nics", nil, &out)
}

// CreateQP is POST /qp.
func (c *Client) CreateQP(ctx context.Context, req QPRequest) (QPInfo, error) {
	var out QPInfo
	return out, c.call(ctx, http.MethodPost, "/qp", req, &out)
}

// QP is GET /qp/{id}.
func (c *Client) QP(ctx context.Context, id int) (QPInfo, error) {
	var out QPInfo
	return out, c.call(ctx, http.MethodGet, "/qp/"+strconv.Itoa(id), nil, &out)
}

// ConnectQP is POST /qp/{id}/connect.
func (c *Client) ConnectQP(ctx context.Context, id int, req ConnectRequest) (QPInfo, error) {
	var out QPInfo
	return out, c.call(ctx, http.MethodPost, "/qp/"+strconv.Itoa(id)+"/connect", req, &out)
}

// DeleteQP is DELETE /qp/{id}.
func (c *Client) DeleteQP(ctx context.Context, id int) error {
	return c.call(ctx, http.MethodDelete, "/qp/"+strconv.Itoa(id), nil, nil)
}

// DeleteQPs is POST /qps/delete.
func (c *Client) DeleteQPs(ctx context.Context, req DeleteQPsRequest) (int, error) {
	var out QPsDeleted
	err := c.call(ctx, http.MethodPost, "/qps/delete", req, &out)
	return out.Deleted, err
}

// RenewOwner is POST /owners/renew: owner's lease runs lease from now.
func (c *Client) RenewOwner(ctx context.Context, owner string, lease time.Duration) error {
	return c.call(ctx, http.MethodPost, "/owners/renew", RenewRequest{Owner: owner, LeaseMS: lease.Milliseconds()}, nil)
}

// StartPerf is POST /perf.
func (c *Client) StartPerf(ctx context.Context, req PerfRequest) (JobStatus, error) {
	var out JobStatus
	return out, c.call(ctx, http.MethodPost, "/perf", req, &out)
}

// SetupCollective is POST /collective.
func (c *Client) SetupCollective(ctx context.Context, req CollectiveRequest) (JobStatus, error) {
	var out JobStatus
	return out, c.call(ctx, http.MethodPost, "/collective", req, &out)
}

// StartCollective is POST /jobs/{id}/start.
func (c *Client) StartCollective(ctx context.Context, id int, req CollectiveStart) (JobStatus, error) {
	var out JobStatus
	return out, c.call(ctx, http.MethodPost, "/jobs/"+strconv.Itoa(id)+"/start", req, &out)
}

// ReleaseBarrier is POST /jobs/{id}/release.
func (c *Client) ReleaseBarrier(ctx context.Context, id int, req Release) (JobStatus, error) {
	var out JobStatus
	return out, c.call(ctx, http.MethodPost, "/jobs/"+strconv.Itoa(id)+"/release", req, &out)
}

// StopJob is POST /jobs/{id}/stop.
func (c *Client) StopJob(ctx context.Context, id int) (JobStatus, error) {
	var out JobStatus
	return out, c.call(ctx, http.MethodPost, "/jobs/"+strconv.Itoa(id)+"/stop", struct{}{}, &out)
}

// Job is GET /jobs/{id}; with after >= 0 it waits up to wait (at most 5
// s; 0 means 5 s) until the node's job version exceeds after or the job
// has finished.
func (c *Client) Job(ctx context.Context, id int, after int64, wait time.Duration) (JobStatus, error) {
	path := "/jobs/" + strconv.Itoa(id)
	if after >= 0 {
		path += "?after=" + strconv.FormatInt(after, 10)
		if wait > 0 {
			path += "&wait_ms=" + strconv.FormatInt(max(wait.Milliseconds(), 1), 10)
		}
	}
	var out JobStatus
	return out, c.call(ctx, http.MethodGet, path, nil, &out)
}

// PostSend is POST /qp/{id}/send.
func (c *Client) PostSend(ctx context.Context, id int, wr WorkRequest) error {
	return c.call(ctx, http.MethodPost, "/qp/"+strconv.Itoa(id)+"/send", wr, nil)
}

// PostRecv is POST /qp/{id}/recv.
func (c *Client) PostRecv(ctx context.Context, id int, wr RecvRequest) error {
	return c.call(ctx, http.MethodPost, "/qp/"+strconv.Itoa(id)+"/recv", wr, nil)
}

// Completions is GET /qp/{id}/completions: the QP's completions since the
// last call, oldest first.
func (c *Client) Completions(ctx context.Context, id int) ([]Completion, error) {
	var out []Completion
	return out, c.call(ctx, http.MethodGet, "/qp/"+strconv.Itoa(id)+"/completions", nil, &out)
}

// ReadMem is GET /qp/{id}/mem: n bytes of the QP's buffer at offset.
func (c *Client) ReadMem(ctx context.Context, id int, offset uint64, n int) ([]byte, error) {
	var out Mem
	path := "/qp/" + strconv.Itoa(id) + "/mem?offset=" + strconv.FormatUint(offset, 10) + "&len=" + strconv.Itoa(n)
	return out.Data, c.call(ctx, http.MethodGet, path, nil, &out)
}

// WriteMem is PUT /qp/{id}/mem: data into the QP's buffer at offset.
func (c *Client) WriteMem(ctx context.Context, id int, offset uint64, data []byte) error {
	path := "/qp/" + strconv.Itoa(id) + "/mem?offset=" + strconv.FormatUint(offset, 10)
	return c.call(ctx, http.MethodPut, path, Mem{Data: data}, nil)
}
