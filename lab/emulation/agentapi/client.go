package agentapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
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
	err := jsonapi.Call(ctx, c.hc, CallTimeout, method, c.base+path, in, out)
	var se *jsonapi.StatusError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Status == http.StatusConflict:
		return fmt.Errorf("agent %s: %s: %w", c.base, se.Message, ErrExists)
	case errors.As(err, &se):
		return fmt.Errorf("agent %s: %s", c.base, se.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("agent %s: %s %s: no answer in time: %w", c.base, method, path, err)
	case errors.As(err, new(*url.Error)):
		return fmt.Errorf("agent %s is unreachable: %w", c.base, err)
	}
	return fmt.Errorf("agent %s: %s %s: %w", c.base, method, path, err)
}
