package nodeapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/internal/labca"
)

// Client calls a node's API over its Unix socket, or through the agent
// of the machine that runs it. It is safe for concurrent use.
type Client struct {
	socket string
	base   string // the URL paths are appended to
	hc     *http.Client
	err    error // the agents' token could not be read
}

// NewClient returns a client for the node listening on socket: a Unix
// socket path, or the http:// URL under which an agent serves the node's
// API for a lab that spans machines (agentapi.Client.NodeURL).
func NewClient(socket string) *Client {
	if strings.HasPrefix(socket, "http://") || strings.HasPrefix(socket, "https://") {
		// Through an agent, with the agents' token of the environment and,
		// over TLS, the lab CA it names (labca.EnvCA).
		token, err := jsonapi.TokenFromEnv()
		base := &http.Transport{MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second}
		if strings.HasPrefix(socket, "https://") {
			cfg, cerr := labca.FromEnv()
			switch {
			case cerr != nil:
				err = errors.Join(err, cerr)
			case cfg == nil:
				err = errors.Join(err, fmt.Errorf("%s speaks TLS: set $%s to the lab CA's %s", socket, labca.EnvCA, labca.CertFile))
			}
			base.TLSClientConfig = cfg
		}
		tr := jsonapi.Bearer{Base: base, Token: token}
		return &Client{socket: socket, base: strings.TrimSuffix(socket, "/"), hc: &http.Client{Transport: tr}, err: err}
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns: 2,
	}
	return &Client{socket: socket, base: "http://node", hc: &http.Client{Transport: tr}}
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Health is GET /health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.call(ctx, http.MethodGet, "/health", nil, &h)
}

// Info is GET /info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var i Info
	return i, c.call(ctx, http.MethodGet, "/info", nil, &i)
}

// Telemetry is GET /telemetry, as telemetry samples.
func (c *Client) Telemetry(ctx context.Context) ([]telemetry.Sample, error) {
	var t Telemetry
	if err := c.call(ctx, http.MethodGet, "/telemetry", nil, &t); err != nil {
		return nil, err
	}
	return DecodeSamples(t.Samples), nil
}

// TelemetryAt is GET /telemetry with the fabric time the samples were
// taken at (the node's clock). With names, only the samples of those
// names come back (GET /telemetry?name=a&name=b): a poller that watches
// one counter asks for it alone, so the node does not encode thousands.
func (c *Client) TelemetryAt(ctx context.Context, names ...string) (clock.Time, []telemetry.Sample, error) {
	var t Telemetry
	path := "/telemetry"
	if len(names) > 0 {
		path += "?" + url.Values{"name": names}.Encode()
	}
	if err := c.call(ctx, http.MethodGet, path, nil, &t); err != nil {
		return 0, nil, err
	}
	return t.FabricTime, DecodeSamples(t.Samples), nil
}

// StartCapture is POST /capture.
func (c *Client) StartCapture(ctx context.Context, req CaptureRequest) (CaptureStatus, error) {
	var s CaptureStatus
	return s, c.call(ctx, http.MethodPost, "/capture", req, &s)
}

// StopCapture is POST /capture/stop.
func (c *Client) StopCapture(ctx context.Context, port string) (CaptureStatus, error) {
	var s CaptureStatus
	return s, c.call(ctx, http.MethodPost, "/capture/stop", CaptureStopRequest{Port: port}, &s)
}

// Shutdown is POST /shutdown: the node stops and removes its socket.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "/shutdown", struct{}{}, nil)
}

// APIError is a failed call's status and message.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("node api: %d: %s", e.Status, e.Message) }

// CallTimeout bounds one API call whose context has no deadline: a node
// that stopped answering (stopped, wedged) fails the call instead of
// holding the command forever. The longest call, a job's long poll,
// waits at most 5 s.
const CallTimeout = 30 * time.Second

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	if c.err != nil {
		return fmt.Errorf("node api %s on %s: %w", path, c.socket, c.err)
	}
	err := jsonapi.Call(ctx, c.hc, CallTimeout, method, c.base+path, in, out)
	var se *jsonapi.StatusError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &APIError{Status: se.Status, Message: se.Message}
	case errors.As(err, new(*url.Error)):
		return fmt.Errorf("node api %s on %s: %w", path, c.socket, err)
	}
	return fmt.Errorf("node api %s: %w", path, err)
}

// AddFault is POST /faults: spec on the egress of target (a port or
// "all").
func (c *Client) AddFault(ctx context.Context, target string, spec faults.Spec) (FaultInfo, error) {
	var out FaultInfo
	return out, c.call(ctx, http.MethodPost, "/faults", FaultRequest{Target: target, Spec: spec}, &out)
}

// Faults is GET /faults.
func (c *Client) Faults(ctx context.Context) ([]FaultInfo, error) {
	var out []FaultInfo
	return out, c.call(ctx, http.MethodGet, "/faults", nil, &out)
}

// RemoveFault is DELETE /faults/{id}.
func (c *Client) RemoveFault(ctx context.Context, id string) (FaultInfo, error) {
	var out FaultInfo
	return out, c.call(ctx, http.MethodDelete, "/faults/"+id, nil, &out)
}

// ClearFaults is DELETE /faults: every fault of the node; it returns how
// many there were.
func (c *Client) ClearFaults(ctx context.Context) (int, error) {
	var out FaultsCleared
	return out.Cleared, c.call(ctx, http.MethodDelete, "/faults", nil, &out)
}
