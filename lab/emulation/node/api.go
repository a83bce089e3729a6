package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

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
			if err != nil {
				code := http.StatusInternalServerError
				var he *httpError
				switch {
				case errors.As(err, &he):
					code = he.code
				case errors.Is(err, emu.ErrStopped):
					code = http.StatusServiceUnavailable
				}
				jsonapi.WriteError(w, code, err)
				return
			}
			jsonapi.Write(w, 0, v)
		})
	}
	h("GET /health", n.health)
	h("GET /info", n.info)
	h("GET /telemetry", n.telemetry)
	h("POST /capture", withBody(n.startCapture))
	h("POST /capture/stop", withBody(n.stopCapture))
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
	out := nodeapi.Health{Status: "ok", Name: n.cfg.Name, Kind: n.cfg.Kind, PID: os.Getpid(), Uptime: time.Since(n.started).Seconds()}
	err := n.loop.Do(r.Context(), func() {
		out.FabricTime = n.loop.Now()
		if b := n.loop.Behind(); !b.Since.IsZero() {
			out.Behind = fmt.Sprintf("behind since %s: frames from other processes read %v late on average over the last second, worst batch lag %v (fabric time; tolerances %v and %v)",
				b.Since.Format("15:04:05"), b.MeanLate, b.MaxLag, emu.BehindMeanLate, emu.BehindMaxLag)
		}
	})
	return out, err
}

func (n *Node) info(r *http.Request) (any, error) {
	out := nodeapi.Info{Name: n.cfg.Name, Kind: n.cfg.Kind, PID: os.Getpid(), Scale: n.cfg.Scale, Seed: n.cfg.Seed, Started: n.started, Routes: len(n.cfg.Routes), Captures: []nodeapi.CaptureStatus{}}
	var macs [][6]byte
	err := n.loop.Do(r.Context(), func() {
		out.FabricTime = n.loop.Now()
		l := n.loop.Lag()
		out.Lag = nodeapi.LagInfo{
			Batches: l.Batches, WallP50: l.WallP50.Seconds(), WallP99: l.WallP99.Seconds(), WallMax: l.Wall.Seconds(),
			FabricP50: l.FabricP50.Seconds(), FabricP99: l.FabricP99.Seconds(), FabricMax: l.FabricMax.Seconds(), Busy: l.Busy,
		}
		for i := range n.cfg.Ports {
			if c := n.caps[i]; c != nil {
				out.Captures = append(out.Captures, c.status())
			}
			macs = append(macs, n.loop.PortMAC(n.base+i))
		}
	})
	for i, p := range n.cfg.Ports {
		mac := p.MAC
		if i < len(macs) {
			mac = fmtMAC(macs[i])
		}
		out.Ports = append(out.Ports, nodeapi.PortInfo{Index: i, IfName: p.IfName, MAC: mac, PeerMAC: p.PeerMAC, Rate: p.Rate, Delay: p.Delay})
	}
	return out, err
}

func fmtMAC(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

func (n *Node) telemetry(r *http.Request) (any, error) {
	var keep func(string) bool
	if names := r.URL.Query()["name"]; len(names) > 0 {
		keep = func(name string) bool { return slices.Contains(names, name) }
	}
	now, samples, err := n.loop.GatherFrom(r.Context(), keep, append([]telemetry.Source{n.share}, n.srcs...)...)
	if err != nil {
		return nil, err
	}
	return nodeapi.Telemetry{FabricTime: now, Samples: nodeapi.EncodeSamples(samples)}, nil
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

// withBody is a handler that takes a JSON request body: it decodes the
// body (at most 1 MiB, no unknown fields; else 400) into a T and hands it
// to f.
func withBody[T any](f func(*http.Request, T) (any, error)) func(*http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var req T
		if err := decodeLimit(r, &req, 1<<20); err != nil {
			return nil, err
		}
		return f(r, req)
	}
}

// decodeLimit decodes a request body of at most limit bytes into v.
func decodeLimit(r *http.Request, v any, limit int64) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("request body: %v", err)
	}
	return nil
}

func (n *Node) startCapture(r *http.Request, req nodeapi.CaptureRequest) (any, error) {
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
	var st nodeapi.CaptureStatus
	err = n.loop.Do(context.WithoutCancel(r.Context()), func() {
		if old := n.caps[i]; old != nil && !old.done {
			c.close()
			os.Remove(c.path)
			busy = true
			return
		}
		n.caps[i] = c
		n.loop.SetTap(n.base+i, c)
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

func (n *Node) stopCapture(r *http.Request, req nodeapi.CaptureStopRequest) (any, error) {
	i, err := n.portIndex(req.Port)
	if err != nil {
		return nil, err
	}
	var st nodeapi.CaptureStatus
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
