package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrExists is wrapped by Deploy when the agent runs a part of the lab
// already (409).
var ErrExists = errors.New("lab exists on the agent")

// Client calls one agent. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// CallTimeout bounds a call without a deadline of its own; deploys of big
// parts pass a longer context.
const CallTimeout = 30 * time.Second

// NewClient returns a client of the agent at addr: "host:port" or an
// http:// URL.
func NewClient(addr string) *Client {
	if !strings.HasPrefix(addr, "http://") {
		addr = "http://" + addr
	}
	return &Client{base: strings.TrimSuffix(addr, "/"), hc: &http.Client{Transport: &http.Transport{MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}}}
}

// URL is the agent's base URL.
func (c *Client) URL() string { return c.base }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// NodeURL is where the agent serves node's API in lab: pass it to
// nodeapi.NewClient.
func (c *Client) NodeURL(lab, node string) string {
	return c.base + "/v1/labs/" + url.PathEscape(lab) + "/nodes/" + url.PathEscape(node)
}

// Info is GET /v1/info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var i Info
	return i, c.call(ctx, http.MethodGet, "/v1/info", nil, &i)
}

// Deploy is PUT /v1/labs/{lab}: the agent deploys its part and returns it
// (a deploy.Lab) into out.
func (c *Client) Deploy(ctx context.Context, lab string, req PartRequest, out any) error {
	return c.call(ctx, http.MethodPut, "/v1/labs/"+url.PathEscape(lab), req, out)
}

// Status is GET /v1/labs/{lab} into out (a deploy.LabStatus).
func (c *Client) Status(ctx context.Context, lab string, out any) error {
	return c.call(ctx, http.MethodGet, "/v1/labs/"+url.PathEscape(lab), nil, out)
}

// Destroy is DELETE /v1/labs/{lab}, the removed objects into out (a
// lifecycle.Report; nil discards them). A lab the agent does not run is
// not an error.
func (c *Client) Destroy(ctx context.Context, lab string, out any) error {
	return c.call(ctx, http.MethodDelete, "/v1/labs/"+url.PathEscape(lab), nil, out)
}

// Repair is POST /v1/labs/{lab}/repair.
func (c *Client) Repair(ctx context.Context, lab string) (Repaired, error) {
	var r Repaired
	return r, c.call(ctx, http.MethodPost, "/v1/labs/"+url.PathEscape(lab)+"/repair", nil, &r)
}

// Restart is POST /v1/labs/{lab}/restart/{node}: the node restarted, into
// out (a deploy.Node).
func (c *Client) Restart(ctx context.Context, lab, node string, out any) error {
	return c.call(ctx, http.MethodPost, "/v1/labs/"+url.PathEscape(lab)+"/restart/"+url.PathEscape(node), nil, out)
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("agent %s: %s %s: %w", c.base, method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("agent %s: %w", c.base, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("agent %s: %s %s: no answer in time: %w", c.base, method, path, err)
		}
		return fmt.Errorf("agent %s is unreachable: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("agent %s: %s %s: %w", c.base, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e ErrorBody
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		err := fmt.Errorf("agent %s: %s", c.base, msg)
		if resp.StatusCode == http.StatusConflict {
			err = fmt.Errorf("%w: %w", err, ErrExists)
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("agent %s: %s %s: %w", c.base, method, path, err)
	}
	return nil
}
