// Package agent is the rocelab agent: the process that runs, on one
// machine, that machine's share of every lab spanning machines (see
// docs/multi-machine.md). It deploys a part with the deploy package — the
// netns runtime, veth pairs between the nodes it runs, a VXLAN tunnel for
// each link to another machine — destroys it, restarts its dead nodes,
// and serves each node's API over TCP (agentapi), since the coordinating
// machine cannot reach the nodes' Unix sockets. State lives in the run
// directory like any lab's, so an agent that restarts finds its parts
// again (Server.Repair brings back the nodes that died with it).
//
// Subfolders: agenttest is the harness of machines as namespaces (and of a
// real Kubernetes control plane) for the tests of labs that span machines.
package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/lab/cluster/agentapi"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// Config configures an agent.
type Config struct {
	// Machine is this machine's name (default: the host name).
	Machine string
	// Underlay is this machine's address toward the others (required).
	Underlay netip.Addr
	// UnderlayNS is the namespace whose routes reach the other machines
	// ("" = the agent's own); Device the interface the tunnels leave by
	// ("" = by route).
	UnderlayNS, Device string
	// VXLANPort is the tunnels' UDP port (0 = links.DefaultVXLANPort).
	VXLANPort uint16
	// Root is the run-directory root (state.DefaultRoot if "").
	Root string
	// Binary runs the node processes (default: this executable).
	Binary string
	// CapacityPPS is what the machine forwards losslessly (default
	// deploy.DefaultCapacityPPSPerCPU × CPUs).
	CapacityPPS float64
	// Version is reported by Info.
	Version string
	// Token, if set, is the bearer token every request must carry
	// (jsonapi.RequireBearer): the API deploys labs and runs commands in
	// their nodes as root.
	Token string
	// Log receives a line per request that changes something.
	Log *slog.Logger
}

// Server is an agent. Its handler is safe for concurrent use: deploys of
// different labs run in parallel, one lab's are serialised by its state
// lock.
type Server struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	// toNode are the proxy's transports, one per node socket: kept
	// connections, so that a node never closes one under a request body
	// still being written (a connection per call did, now and then).
	toNode map[string]*http.Transport
	// captures ends the captures in progress that a client named
	// (CaptureRequest.ID, "lab/id"), for it to stop them early and still
	// get their frames (DELETE /v1/labs/{lab}/captures/{id}).
	captures map[string]context.CancelFunc
}

// New checks cfg and returns the agent.
func New(cfg Config) (*Server, error) {
	if cfg.Machine == "" {
		return nil, errors.New("agent: no machine name")
	}
	if !cfg.Underlay.IsValid() {
		return nil, fmt.Errorf("agent %s: no underlay address (the address the other machines reach this one at)", cfg.Machine)
	}
	if cfg.Root == "" {
		cfg.Root = state.DefaultRoot
	}
	if cfg.CapacityPPS <= 0 {
		cfg.CapacityPPS = deploy.DefaultCapacityPPSPerCPU * float64(runtime.NumCPU())
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, log: log.With("machine", cfg.Machine), toNode: map[string]*http.Transport{}, captures: map[string]context.CancelFunc{}}, nil
}

// Handler serves the agent's API (agentapi).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, fn func(*http.Request) (any, int, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			out, code, err := fn(r)
			if err != nil {
				jsonapi.WriteError(w, cmp.Or(code, http.StatusInternalServerError), err)
				return
			}
			jsonapi.Write(w, code, out)
		})
	}
	h("GET /v1/info", s.info)
	h("PUT /v1/labs/{lab}", s.deploy)
	h("GET /v1/labs/{lab}", s.status)
	h("DELETE /v1/labs/{lab}", s.destroy)
	h("POST /v1/labs/{lab}/repair", s.repair)
	h("POST /v1/labs/{lab}/restart/{node}", s.restart)
	h("POST /v1/labs/{lab}/exec/{node}", s.exec)
	mux.HandleFunc("POST /v1/labs/{lab}/capture/{node}", s.capture)
	h("DELETE /v1/labs/{lab}/captures/{id}", s.stopCapture)
	mux.HandleFunc("/v1/labs/{lab}/nodes/{node}/{rest...}", s.proxy)
	return jsonapi.RequireBearer(s.cfg.Token, mux)
}

func (s *Server) info(*http.Request) (any, int, error) {
	all, err := state.List(s.cfg.Root)
	if err != nil {
		return nil, 0, err
	}
	labs := []string{}
	for _, lab := range all {
		if s.mine(lab, false) {
			labs = append(labs, lab)
		}
	}
	return agentapi.Info{Machine: s.cfg.Machine, Underlay: s.cfg.Underlay, CPUs: runtime.NumCPU(), CapacityPPS: s.cfg.CapacityPPS, Version: s.cfg.Version, Labs: labs}, 0, nil
}

// labName is the request's {lab}, checked.
func labName(r *http.Request) (string, error) {
	lab := r.PathValue("lab")
	if err := state.ValidName(lab); err != nil {
		return "", err
	}
	return lab, nil
}

// mine reports whether lab is one of the agent's parts: deployed by it for
// its machine, or a deploy of it that did not complete (which destroy may
// remove, incomplete=true).
func (s *Server) mine(lab string, incomplete bool) bool {
	machine, deployed, err := deploy.PartOf(s.cfg.Root, lab)
	if err != nil {
		return false
	}
	if !deployed {
		// A deploy that did not complete, or no lab at all (destroying
		// nothing is not an error: a client's rollback asks every agent).
		return incomplete
	}
	return machine == s.cfg.Machine
}

// partName is the request's {lab}, checked, and one of the agent's parts:
// a lab under its root that it did not deploy (one deployed on this
// machine without agents, or another machine's part) answers 404, as if
// it did not exist — the agent serves nothing of it, exec least of all.
func (s *Server) partName(r *http.Request, incomplete bool) (string, int, error) {
	lab, err := labName(r)
	if err != nil {
		return "", http.StatusBadRequest, err
	}
	if !s.mine(lab, incomplete) {
		return "", http.StatusNotFound, fmt.Errorf("lab %s: %w", lab, deploy.ErrNoLab)
	}
	return lab, 0, nil
}

func (s *Server) deploy(r *http.Request) (any, int, error) {
	lab, err := labName(r)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	var req agentapi.PartRequest
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<20)).Decode(&req); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("deploy %s: bad request: %w", lab, err)
	}
	if req.Placement == nil {
		return nil, http.StatusBadRequest, fmt.Errorf("deploy %s: the request has no placement", lab)
	}
	t, err := topologies.Parse(req.Source, req.Topology)
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("deploy %s: %w", lab, err)
	}
	part := &deploy.Part{Machine: s.cfg.Machine, Placement: req.Placement, Underlay: req.Underlay,
		UnderlayNS: s.cfg.UnderlayNS, Device: s.cfg.Device, Port: s.cfg.VXLANPort}
	if req.Underlay[s.cfg.Machine] != s.cfg.Underlay {
		return nil, http.StatusBadRequest, fmt.Errorf("deploy %s: the request gives machine %s the underlay address %v, the agent has %v", lab, s.cfg.Machine, req.Underlay[s.cfg.Machine], s.cfg.Underlay)
	}
	start := time.Now()
	s.log.Info("deploy", "lab", lab, "nodes", len(req.Placement.Nodes(t, s.cfg.Machine)))
	// The part outlives the request: a client that gives up does not
	// cancel a deploy half-way (it destroys the part instead).
	l, err := deploy.Deploy(context.WithoutCancel(r.Context()), deploy.Options{
		Topology: t, LabName: lab, Root: s.cfg.Root, Binary: s.cfg.Binary,
		Scale: req.Scale, Seed: req.Seed, Origin: req.Origin, Part: part,
	})
	switch {
	case errors.Is(err, deploy.ErrExists):
		return nil, http.StatusConflict, err
	case err != nil:
		s.log.Warn("deploy failed", "lab", lab, "err", err)
		return nil, http.StatusInternalServerError, err
	}
	for _, w := range l.Waits {
		s.log.Info("deploy waited", "lab", lab, "for", w)
	}
	s.log.Info("deployed", "lab", lab, "in", time.Since(start).Round(time.Millisecond))
	return l, http.StatusCreated, nil
}

func (s *Server) status(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		return nil, code, err
	}
	st, err := deploy.Inspect(r.Context(), s.cfg.Root, lab)
	if errors.Is(err, deploy.ErrNoLab) {
		return nil, http.StatusNotFound, err
	}
	if err != nil {
		return nil, 0, err
	}
	if len(st) != 1 {
		return nil, http.StatusNotFound, fmt.Errorf("lab %s: %w", lab, deploy.ErrNoLab)
	}
	return st[0], 0, nil
}

func (s *Server) destroy(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, true)
	if err != nil {
		return nil, code, err
	}
	rep, err := deploy.Destroy(context.WithoutCancel(r.Context()), s.cfg.Root, lab)
	if errors.Is(err, state.ErrBusy) {
		return nil, http.StatusConflict, err
	}
	if err != nil {
		return nil, 0, err
	}
	s.forget(state.Dir(s.cfg.Root, lab))
	s.log.Info("destroyed", "lab", lab, "objects", len(rep.Removed))
	return rep, 0, nil
}

func (s *Server) repair(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		return nil, code, err
	}
	fixed, err := deploy.Repair(r.Context(), s.cfg.Root, lab, deploy.RestartOptions{})
	if fixed == nil {
		fixed = []string{}
	}
	if errors.Is(err, deploy.ErrNoLab) {
		return nil, http.StatusNotFound, err
	}
	if err != nil {
		return nil, 0, err
	}
	return agentapi.Repaired{Restarted: fixed}, 0, nil
}

func (s *Server) restart(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		return nil, code, err
	}
	n, err := deploy.Restart(r.Context(), s.cfg.Root, lab, r.PathValue("node"), deploy.RestartOptions{})
	if errors.Is(err, deploy.ErrNoNode) || errors.Is(err, deploy.ErrNoLab) {
		return nil, http.StatusNotFound, err
	}
	if err != nil {
		return nil, 0, err
	}
	s.log.Info("restarted", "lab", lab, "node", n.Name)
	return n, 0, nil
}

// Repair restarts the dead nodes of every lab part under the root: after
// the agent itself restarted, whatever died with it comes back. It
// returns what it restarted, by lab.
func (s *Server) Repair(ctx context.Context) (map[string][]string, error) {
	labs, err := state.List(s.cfg.Root)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	var errs []error
	for _, lab := range labs {
		if !s.mine(lab, false) {
			continue // not the agent's: it restarts nothing of other labs
		}
		fixed, err := deploy.Repair(ctx, s.cfg.Root, lab, deploy.RestartOptions{})
		if len(fixed) > 0 {
			out[lab] = fixed
			s.log.Info("repaired", "lab", lab, "nodes", strings.Join(fixed, ","))
		}
		if err != nil && !errors.Is(err, deploy.ErrNoLab) {
			errs = append(errs, fmt.Errorf("lab %s: %w", lab, err))
		}
	}
	return out, errors.Join(errs...)
}

// proxy forwards a node API call to the node's Unix socket.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request) {
	lab, node := r.PathValue("lab"), r.PathValue("node")
	fail := func(code int, err error) { jsonapi.WriteError(w, code, err) }
	if err := state.ValidName(lab); err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	// The lab record FindNode reads also says whose part it is (mine):
	// one read of it per proxied call.
	l, n, err := deploy.FindNode(s.cfg.Root, lab, node)
	if err == nil && l.Machine != s.cfg.Machine {
		err = fmt.Errorf("lab %s: %w", lab, deploy.ErrNoLab)
	}
	if err != nil {
		fail(http.StatusNotFound, err)
		return
	}
	if n.Socket == "" {
		fail(http.StatusNotFound, fmt.Errorf("node %s runs no process", node))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: "node", Path: "/" + r.PathValue("rest"), RawQuery: r.URL.RawQuery}
			pr.Out.Host = "node"
		},
		Transport: s.transport(n.Socket),
		// Streams (captures) go through as they come.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			fail(http.StatusBadGateway, fmt.Errorf("node %s of lab %s on machine %s does not answer: %w", node, lab, s.cfg.Machine, err))
		},
	}
	rp.ServeHTTP(w, r)
}

// Run repairs the parts under the root (Repair: what died while no agent
// ran comes back), then serves the API on ln until ctx ends. Calls in
// flight get a few seconds to finish; deploys and destroys in flight run
// to their end whatever happens to their request.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	if fixed, err := s.Repair(ctx); err != nil {
		s.log.Warn("repair at start", "err", err)
	} else if len(fixed) > 0 {
		s.log.Info("repaired at start", "labs", len(fixed))
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	s.log.Info("agent serving", "addr", ln.Addr().String(), "underlay", s.cfg.Underlay, "root", s.cfg.Root)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	srv.Close()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// transport is the proxy's transport to the node on socket.
func (s *Server) transport(socket string) *http.Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.toNode[socket]
	if tr == nil {
		tr = &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			},
			MaxIdleConnsPerHost: 4,
			// A restarted or destroyed node's connections go soon.
			IdleConnTimeout: 5 * time.Second,
		}
		s.toNode[socket] = tr
	}
	return tr
}

// forget drops the proxy's transports to the nodes of the run directory
// dir.
func (s *Server) forget(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for socket, tr := range s.toNode {
		if strings.HasPrefix(socket, dir+"/") {
			tr.CloseIdleConnections()
			delete(s.toNode, socket)
		}
	}
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	buf bytes.Buffer
	n   int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (s *Server) exec(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		return nil, code, err
	}
	var req agentapi.ExecRequest
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&req); err != nil || len(req.Argv) == 0 {
		return nil, http.StatusBadRequest, fmt.Errorf("exec: want {\"argv\": [...]}: %v", err)
	}
	out, errOut := &limited{n: agentapi.MaxExecOutput}, &limited{n: agentapi.MaxExecOutput}
	code, err = deploy.Exec(r.Context(), s.cfg.Root, lab, r.PathValue("node"), req.Argv, sandbox.Stdio{Out: out, Err: errOut, Env: req.Env})
	if errors.Is(err, deploy.ErrNoNode) || errors.Is(err, deploy.ErrNoLab) {
		return nil, http.StatusNotFound, err
	}
	if err != nil {
		return nil, 0, err
	}
	return agentapi.ExecResult{Exit: code, Stdout: out.buf.Bytes(), Stderr: errOut.buf.Bytes()}, 0, nil
}

// capture records a node port's frames into a file of the agent's and
// sends it back.
func (s *Server) capture(w http.ResponseWriter, r *http.Request) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		jsonapi.WriteError(w, code, err)
		return
	}
	var req agentapi.CaptureRequest
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&req); err != nil {
		jsonapi.WriteError(w, http.StatusBadRequest, fmt.Errorf("capture: %w", err))
		return
	}
	if req.Frames <= 0 && req.Duration <= 0 {
		jsonapi.WriteError(w, http.StatusBadRequest, errors.New("capture: give a frame count or a duration"))
		return
	}
	f, err := os.CreateTemp(state.Dir(s.cfg.Root, lab), "capture-*.pcap")
	if err != nil {
		jsonapi.WriteError(w, http.StatusNotFound, fmt.Errorf("capture: lab %s: %w", lab, err))
		return
	}
	f.Close()
	defer os.Remove(f.Name())
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	if req.ID != "" {
		key := lab + "/" + req.ID
		s.mu.Lock()
		s.captures[key] = stop
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.captures, key)
			s.mu.Unlock()
		}()
	}
	res, err := deploy.Capture(ctx, s.cfg.Root, lab, r.PathValue("node")+":"+req.Port,
		deploy.CaptureOptions{File: f.Name(), Frames: req.Frames, Dir: req.Dir, Duration: req.Duration})
	if err != nil {
		jsonapi.WriteError(w, http.StatusInternalServerError, err)
		return
	}
	pcap, err := os.Open(f.Name())
	if err != nil {
		jsonapi.WriteError(w, http.StatusInternalServerError, err)
		return
	}
	defer pcap.Close()
	w.Header().Set("Content-Type", "application/vnd.tcpdump.pcap")
	w.Header().Set(agentapi.FramesHeader, strconv.Itoa(res.Frames))
	io.Copy(w, pcap)
}

// stopCapture ends the capture the client named id early: it answers with
// the frames it has (deploy.Capture stops at the end of its context).
func (s *Server) stopCapture(r *http.Request) (any, int, error) {
	lab, code, err := s.partName(r, false)
	if err != nil {
		return nil, code, err
	}
	s.mu.Lock()
	stop, ok := s.captures[lab+"/"+r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		return nil, http.StatusNotFound, fmt.Errorf("lab %s: no capture %q in progress", lab, r.PathValue("id"))
	}
	stop()
	return struct{}{}, 0, nil
}
