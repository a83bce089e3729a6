package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/emu"
)

// Health is GET /health.
type Health struct {
	Status string  `json:"status"` // "ok"
	Name   string  `json:"name"`
	Kind   Kind    `json:"kind"`
	PID    int     `json:"pid"`
	Uptime float64 `json:"uptime_seconds"`
	// FabricTime is the loop's fabric time, in picoseconds.
	FabricTime clock.Time `json:"fabric_time_ps"`
}

// PortInfo describes one port in Info.
type PortInfo struct {
	Index   int            `json:"index"`
	IfName  string         `json:"ifname"`
	MAC     string         `json:"mac"`
	PeerMAC string         `json:"peer_mac"`
	Rate    clock.Rate     `json:"rate_bps"`
	Delay   clock.Duration `json:"delay_ps"`
}

// LagInfo is emu.Lag in JSON.
type LagInfo struct {
	Batches   int64   `json:"batches"`
	WallP50   float64 `json:"wall_p50_seconds"`
	WallP99   float64 `json:"wall_p99_seconds"`
	WallMax   float64 `json:"wall_max_seconds"`
	FabricP50 float64 `json:"fabric_p50_seconds"`
	FabricP99 float64 `json:"fabric_p99_seconds"`
	FabricMax float64 `json:"fabric_max_seconds"`
	Busy      float64 `json:"busy_ratio"`
}

// Info is GET /info.
type Info struct {
	Name       string          `json:"name"`
	Kind       Kind            `json:"kind"`
	PID        int             `json:"pid"`
	Scale      int             `json:"scale"`
	Seed       uint64          `json:"seed"`
	Started    time.Time       `json:"started"`
	FabricTime clock.Time      `json:"fabric_time_ps"`
	Ports      []PortInfo      `json:"ports"`
	Routes     int             `json:"routes"`
	Lag        LagInfo         `json:"lag"`
	Captures   []CaptureStatus `json:"captures"`
}

// Label and Sample are telemetry.Label and telemetry.Sample in JSON.
type Label struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Sample is one telemetry sample in JSON; Kind is "counter" or "gauge".
type Sample struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Labels []Label `json:"labels,omitempty"`
	Value  float64 `json:"value"`
}

// Telemetry is GET /telemetry.
type Telemetry struct {
	// FabricTime is when the samples were taken, in picoseconds.
	FabricTime clock.Time `json:"fabric_time_ps"`
	Samples    []Sample   `json:"samples"`
}

// CaptureRequest is POST /capture: capture port Port's frames into File
// (an absolute path, created 0600) until MaxFrames frames (0: until
// stopped) in direction Dir ("rx", "tx" or "both", the default).
type CaptureRequest struct {
	Port      string `json:"port"` // ifname or 0-based index
	File      string `json:"file"`
	MaxFrames int    `json:"max_frames"`
	Dir       string `json:"dir,omitempty"`
}

// CaptureStopRequest is POST /capture/stop.
type CaptureStopRequest struct {
	Port string `json:"port"`
}

// CaptureStatus describes a capture.
type CaptureStatus struct {
	Port      string `json:"port"`
	File      string `json:"file"`
	Dir       string `json:"dir"`
	MaxFrames int    `json:"max_frames"`
	Frames    int    `json:"frames"`
	Done      bool   `json:"done"`
	Error     string `json:"error,omitempty"`
}

// apiError is the body of a failed call.
type apiError struct {
	Error string `json:"error"`
}

type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// handler returns the API; shutdown stops the node.
func (n *Node) handler(shutdown func()) http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, f func(*http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := f(r)
			w.Header().Set("Content-Type", "application/json")
			if err != nil {
				code := http.StatusInternalServerError
				var he *httpError
				switch {
				case errors.As(err, &he):
					code = he.code
				case errors.Is(err, emu.ErrStopped):
					code = http.StatusServiceUnavailable
				}
				w.WriteHeader(code)
				json.NewEncoder(w).Encode(apiError{err.Error()})
				return
			}
			json.NewEncoder(w).Encode(v)
		})
	}
	h("GET /health", n.health)
	h("GET /info", n.info)
	h("GET /telemetry", n.telemetry)
	h("POST /capture", n.startCapture)
	h("POST /capture/stop", n.stopCapture)
	n.faultRoutes(h)
	if n.ep != nil {
		n.ep.routes(h)
	}
	h("POST /shutdown", func(*http.Request) (any, error) {
		shutdown()
		return map[string]string{"status": "shutting down"}, nil
	})
	return mux
}

func (n *Node) health(r *http.Request) (any, error) {
	out := Health{Status: "ok", Name: n.cfg.Name, Kind: n.cfg.Kind, PID: os.Getpid(), Uptime: time.Since(n.started).Seconds()}
	err := n.loop.Do(r.Context(), func() { out.FabricTime = n.loop.Now() })
	return out, err
}

func (n *Node) info(r *http.Request) (any, error) {
	out := Info{Name: n.cfg.Name, Kind: n.cfg.Kind, PID: os.Getpid(), Scale: n.cfg.Scale, Seed: n.cfg.Seed, Started: n.started, Routes: len(n.cfg.Routes), Captures: []CaptureStatus{}}
	var macs [][6]byte
	err := n.loop.Do(r.Context(), func() {
		out.FabricTime = n.loop.Now()
		l := n.loop.Lag()
		out.Lag = LagInfo{
			Batches: l.Batches, WallP50: l.WallP50.Seconds(), WallP99: l.WallP99.Seconds(), WallMax: l.Wall.Seconds(),
			FabricP50: l.FabricP50.Seconds(), FabricP99: l.FabricP99.Seconds(), FabricMax: l.FabricMax.Seconds(), Busy: l.Busy,
		}
		for i := range n.cfg.Ports {
			if c := n.caps[i]; c != nil {
				out.Captures = append(out.Captures, c.status())
			}
			macs = append(macs, n.loop.PortMAC(i))
		}
	})
	for i, p := range n.cfg.Ports {
		mac := p.MAC
		if i < len(macs) {
			mac = fmtMAC(macs[i])
		}
		out.Ports = append(out.Ports, PortInfo{Index: i, IfName: p.IfName, MAC: mac, PeerMAC: p.PeerMAC, Rate: p.Rate, Delay: p.Delay})
	}
	return out, err
}

func fmtMAC(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

func (n *Node) telemetry(r *http.Request) (any, error) {
	var now clock.Time
	var samples []telemetry.Sample
	err := n.loop.Do(r.Context(), func() {
		now = n.loop.Now()
		samples = telemetry.Gather(append([]telemetry.Source{n.loop}, n.srcs...)...)
	})
	if err != nil {
		return nil, err
	}
	return Telemetry{FabricTime: now, Samples: toJSON(samples)}, nil
}

func toJSON(in []telemetry.Sample) []Sample {
	out := make([]Sample, len(in))
	for i, s := range in {
		out[i] = Sample{Name: s.Name, Kind: s.Kind.String(), Value: s.Value}
		for _, l := range s.Labels {
			out[i].Labels = append(out[i].Labels, Label(l))
		}
	}
	return out
}

func fromJSON(in []Sample) []telemetry.Sample {
	out := make([]telemetry.Sample, len(in))
	for i, s := range in {
		out[i] = telemetry.Sample{Name: s.Name, Value: s.Value}
		if s.Kind == "gauge" {
			out[i].Kind = telemetry.Gauge
		}
		for _, l := range s.Labels {
			out[i].Labels = append(out[i].Labels, telemetry.Label(l))
		}
	}
	return out
}

// portIndex resolves an ifname or a 0-based index.
func (n *Node) portIndex(s string) (int, error) {
	for i, p := range n.cfg.Ports {
		if p.IfName == s {
			return i, nil
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(n.cfg.Ports) {
		return i, nil
	}
	return 0, badRequest("no port %q", s)
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("request body: %v", err)
	}
	return nil
}

func (n *Node) startCapture(r *http.Request) (any, error) {
	var req CaptureRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	i, err := n.portIndex(req.Port)
	if err != nil {
		return nil, err
	}
	switch req.Dir {
	case "":
		req.Dir = "both"
	case "rx", "tx", "both":
	default:
		return nil, badRequest("dir %q: want rx, tx or both", req.Dir)
	}
	if !filepath.IsAbs(req.File) {
		return nil, badRequest("file %q: want an absolute path", req.File)
	}
	if req.MaxFrames < 0 {
		return nil, badRequest("max_frames must not be negative")
	}
	var busy bool
	if err := n.loop.Do(r.Context(), func() { c := n.caps[i]; busy = c != nil && !c.done }); err != nil {
		return nil, err
	}
	if busy {
		return nil, &httpError{http.StatusConflict, fmt.Errorf("port %s is already being captured", n.cfg.Ports[i].IfName)}
	}
	c, err := newCapture(n, i, req.File, req.Dir, req.MaxFrames)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	var st CaptureStatus
	err = n.loop.Do(context.WithoutCancel(r.Context()), func() {
		if old := n.caps[i]; old != nil && !old.done {
			c.close()
			os.Remove(c.path)
			busy = true
			return
		}
		n.caps[i] = c
		n.loop.SetTap(i, c)
		st = c.status()
	})
	if err != nil {
		c.close()
		return nil, err
	}
	if busy {
		return nil, &httpError{http.StatusConflict, fmt.Errorf("port %s is already being captured", n.cfg.Ports[i].IfName)}
	}
	return st, nil
}

func (n *Node) stopCapture(r *http.Request) (any, error) {
	var req CaptureStopRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	i, err := n.portIndex(req.Port)
	if err != nil {
		return nil, err
	}
	var st CaptureStatus
	found := false
	err = n.loop.Do(r.Context(), func() {
		c := n.caps[i]
		if c == nil {
			return
		}
		found = true
		c.stop()
		delete(n.caps, i)
		st = c.status()
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &httpError{http.StatusNotFound, fmt.Errorf("no capture on port %s", n.cfg.Ports[i].IfName)}
	}
	return st, nil
}
