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
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/internal/labca"
)

// ErrExists is wrapped by Deploy when the agent runs a part of the lab
// already (409); ErrNoPart by calls about a lab the agent has no part of
// (404).
var (
	ErrExists = errors.New("lab exists on the agent")
	ErrNoPart = errors.New("no part of the lab on the agent")
)

// Client calls one agent. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
	err  error // reading the token failed: every call says so
}

// CallTimeout bounds a call without a deadline of its own; deploys of big
// parts pass a longer context.
const CallTimeout = 30 * time.Second

// NewClient returns a client of the agent at addr: "host:port", or an
// http:// or https:// URL. With $ROCELAB_AGENT_CA set (labca.EnvCA: the
// lab CA's certificate), "host:port" is reached over https and the agent's
// certificate must chain to that CA; an https:// URL needs it. It sends
// the agents' token of the environment (jsonapi.TokenEnv, TokenFileEnv),
// if one is set.
func NewClient(addr string) *Client {
	caFile := os.Getenv(labca.EnvCA)
	if !strings.HasPrefix(addr, "http://") && !strings.HasPrefix(addr, "https://") {
		if caFile != "" {
			addr = "https://" + addr
		} else {
			addr = "http://" + addr
		}
	}
	token, err := jsonapi.TokenFromEnv()
	base := &http.Transport{MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}
	if strings.HasPrefix(addr, "https://") {
		if caFile == "" {
			err = errors.Join(err, fmt.Errorf("agent %s speaks TLS: set $%s to the lab CA's %s", addr, labca.EnvCA, labca.CertFile))
		} else if cfg, cerr := labca.ClientConfig(caFile); cerr != nil {
			err = errors.Join(err, cerr)
		} else {
			base.TLSClientConfig = cfg
		}
	}
	tr := jsonapi.Bearer{Base: base, Token: token}
	return &Client{base: strings.TrimSuffix(addr, "/"), hc: &http.Client{Transport: tr}, err: err}
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
	if c.err != nil {
		return fmt.Errorf("agent %s: %w", c.base, c.err)
	}
	err := jsonapi.Call(ctx, c.hc, CallTimeout, method, c.base+path, in, out)
	var se *jsonapi.StatusError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Status == http.StatusConflict:
		return fmt.Errorf("agent %s: %s: %w", c.base, se.Message, ErrExists)
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		return fmt.Errorf("agent %s: %s: %w", c.base, se.Message, ErrNoPart)
	case errors.As(err, &se):
		return fmt.Errorf("agent %s: %s", c.base, se.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("agent %s: %s %s: no answer in time: %w", c.base, method, path, err)
	case errors.As(err, new(*url.Error)):
		return fmt.Errorf("agent %s is unreachable: %w", c.base, err)
	}
	return fmt.Errorf("agent %s: %s %s: %w", c.base, method, path, err)
}

// agentStopTimeout bounds the call that ends a capture early.
const agentStopTimeout = 5 * time.Second

// ExecTimeout bounds a command run through an agent whose context has no
// deadline.
const ExecTimeout = time.Hour

// Exec is POST /v1/labs/{lab}/exec/{node}.
func (c *Client) Exec(ctx context.Context, lab, node string, req ExecRequest) (ExecResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ExecTimeout)
		defer cancel()
	}
	var r ExecResult
	return r, c.call(ctx, http.MethodPost, "/v1/labs/"+url.PathEscape(lab)+"/exec/"+url.PathEscape(node), req, &r)
}

// StopWait bounds how long an interrupted Capture waits for the frames
// captured so far.
const StopWait = 20 * time.Second

// Capture is POST /v1/labs/{lab}/capture/{node}: the pcap goes to w, and
// Capture returns its frame count. When ctx ends first (Ctrl-C), the
// capture is ended early (DELETE /v1/labs/{lab}/captures/{id}) and its
// frames so far still come back, within StopWait: the error is then nil.
func (c *Client) Capture(ctx context.Context, lab, node string, req CaptureRequest, w io.Writer) (int, error) {
	if req.Frames <= 0 && req.Duration <= 0 {
		return 0, fmt.Errorf("agent %s: a capture through an agent needs a frame count or a duration", c.base)
	}
	if c.err != nil {
		return 0, fmt.Errorf("agent %s: %w", c.base, c.err)
	}
	if req.ID == "" {
		req.ID = strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.Itoa(os.Getpid())
	}
	b, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	// The call outlives ctx by a stop and StopWait: ctx's end asks the
	// agent to end the capture, which then answers with what it has.
	callCtx, cancelCall := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCall()
	answered := make(chan struct{})
	defer close(answered)
	go func() {
		select {
		case <-answered:
			return
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(callCtx, agentStopTimeout)
		err := c.call(sctx, http.MethodDelete, "/v1/labs/"+url.PathEscape(lab)+"/captures/"+url.PathEscape(req.ID), nil, nil)
		cancel()
		if err != nil {
			cancelCall()
			return
		}
		select {
		case <-answered:
		case <-time.After(StopWait):
			cancelCall()
		}
	}()
	hr, err := http.NewRequestWithContext(callCtx, http.MethodPost, c.base+"/v1/labs/"+url.PathEscape(lab)+"/capture/"+url.PathEscape(node), bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return 0, fmt.Errorf("agent %s is unreachable: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e ErrorBody
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(msg, &e) == nil && e.Error != "" {
			msg = []byte(e.Error)
		}
		return 0, fmt.Errorf("agent %s: %s", c.base, bytes.TrimSpace(msg))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return 0, fmt.Errorf("agent %s: capture: %w", c.base, err)
	}
	frames, _ := strconv.Atoi(resp.Header.Get(FramesHeader))
	return frames, nil
}
