package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/ctlplane"
)

// IO is a node's frame I/O: one PortIO per Config.Ports entry, the Waiter
// that watches them, and how to release them. OpenIO opens AF_PACKET
// sockets; tests use emu.MemPorts.
type IO struct {
	Ports  []emu.PortIO
	Waiter emu.Waiter
	// MACs are the interfaces' own addresses, used where Config leaves
	// a port's MAC empty (may be nil).
	MACs  [][6]byte
	Close func() error
}

// Node is one running switch node: the model, its loop and its API.
type Node struct {
	cfg     Config
	log     *slog.Logger
	loop    *emu.Loop
	base    int              // the node's port 0 on loop (0 unless in a Group)
	share   telemetry.Source // the loop's telemetry, or the node's Share of it
	sw      *switchmodel.Switch
	srcs    []telemetry.Source
	started time.Time
	caps    map[int]*capture // by port; loop goroutine only
	ep      *epState         // endpoint nodes only
	fx      *faultSet        // the fault chains on every port's egress
	// inline runs a collective's data work on the loop (see dataWork).
	inline bool
}

// New builds a node from cfg over io (io is not closed by the node).
func New(cfg Config, io IO, log *slog.Logger) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	if len(io.Ports) != len(cfg.Ports) {
		return nil, fmt.Errorf("node %s: %d port I/Os for %d ports", cfg.Name, len(io.Ports), len(cfg.Ports))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Kind == nodeapi.KindEndpoint {
		return newEndpoint(cfg, io, log)
	}
	loop, err := emu.New(emu.Options{
		Name: cfg.Name, Scale: cfg.Scale, Seed: cfg.Seed, Ports: emuPorts(cfg, io), Waiter: io.Waiter, Recycle: true, Origin: cfg.OriginTime(),
		Lead: cfg.lead(),
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	return newSwitch(cfg, loop, 0, loop, true, log)
}

// newSwitch builds a switch node whose ports are loop's ports base …
// base+len(cfg.Ports)-1; share is the loop's telemetry the node reports,
// and the node reports its process's (CPU, heap, goroutines) if leader:
// once per process.
func newSwitch(cfg Config, loop *emu.Loop, base int, share telemetry.Source, leader bool, log *slog.Logger) (*Node, error) {
	var specs []switchmodel.PortSpec
	for _, pc := range cfg.Ports {
		specs = append(specs, switchmodel.PortSpec{Rate: pc.Rate, Delay: pc.Delay})
	}
	cp, err := controlPlane(cfg, loop, base)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	sw, err := switchmodel.New(switchmodel.Options{
		Name:    cfg.Name,
		Config:  *cfg.Switch,
		Sched:   loop,
		Rand:    loop.Rand("switch/" + cfg.Name),
		Ports:   specs,
		Control: cp,
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	n := &Node{cfg: cfg, log: log, loop: loop, base: base, share: share, sw: sw, caps: map[int]*capture{}}
	n.fx = newFaultSet(&n.cfg, loop, base)
	for i := range cfg.Ports {
		// Model → fault chain (empty: pass-through) → loop.
		sw.Attach(i, n.fx.connect(i, sw.Port(i)))
	}
	if err := cfg.Routes.install(sw); err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	if err := sw.AddLocal(cp.Addrs()...); err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	n.srcs = []telemetry.Source{sw, n.fx}
	if leader {
		n.srcs = append(n.srcs, procStats{cfg.Name})
	}
	return n, nil
}

// Loop returns the node's loop (for in-process use and tests).
func (n *Node) Loop() *emu.Loop { return n.loop }

// Switch returns the node's switch model; touch it only on the loop
// goroutine (Loop().Do).
func (n *Node) Switch() *switchmodel.Switch { return n.sw }

// Run serves the API on cfg.Socket and drives the model until ctx ends or
// a client posts /shutdown, then stops the loop, closes open captures and
// removes the socket.
func (n *Node) Run(ctx context.Context) error { return n.run(ctx, nil) }

// run is Run, calling ready (if not nil) on the loop's first turn.
func (n *Node) run(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, err := n.serve(ctx, cancel)
	if err != nil {
		return err
	}
	if ready != nil {
		n.loop.Post(ready)
	}
	runErr := n.loop.Run(ctx)
	cancel()
	return n.stopped(runErr, stop())
}

// serve starts the node's API (and, for an endpoint, its verbs server);
// /shutdown calls shutdown. The returned stop waits for ctx's end to
// reach them, shuts the API down and closes open captures: call it once
// the loop has stopped.
func (n *Node) serve(ctx context.Context, shutdown func()) (stop func() error, err error) {
	ln, err := listen(n.cfg.Socket)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.cfg.Name, err)
	}
	n.started = time.Now()
	srv := &http.Server{Handler: n.handler(shutdown), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	verbsDone := make(chan error, 1)
	if n.ep != nil {
		vln, err := n.listenVerbs()
		if err != nil {
			srv.Close()
			<-served
			os.Remove(n.cfg.Socket)
			return nil, fmt.Errorf("node %s: %w", n.cfg.Name, err)
		}
		go func() { verbsDone <- n.ep.verbs.Serve(ctx, vln) }()
		go n.ep.sweepLeases(ctx)
	} else {
		verbsDone <- nil
	}
	n.log.Info("node running", "name", n.cfg.Name, "kind", n.cfg.Kind, "ports", len(n.cfg.Ports), "scale", n.cfg.Scale, "socket", n.cfg.Socket)
	return func() error {
		defer os.Remove(n.cfg.Socket)
		if err := <-verbsDone; err != nil {
			n.log.Warn("verbs server", "err", err)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		shutErr := srv.Shutdown(sctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			shutErr = errors.Join(shutErr, err)
		}
		// The loop has stopped: its state is ours now.
		for i, c := range n.caps {
			c.close()
			delete(n.caps, i)
		}
		n.log.Info("node stopped", "name", n.cfg.Name)
		return shutErr
	}, nil
}

// stopped is the error of a node whose loop ended with runErr and whose
// API shut down with shutErr.
func (n *Node) stopped(runErr, shutErr error) error {
	if runErr != nil {
		return fmt.Errorf("node %s: %w", n.cfg.Name, runErr)
	}
	if shutErr != nil {
		return fmt.Errorf("node %s: api: %w", n.cfg.Name, shutErr)
	}
	return nil
}

// listenVerbs opens the socket where programs on the host reach the NICs
// through rocelab's libibverbs (verbs.SocketPath).
func (n *Node) listenVerbs() (*net.UnixListener, error) {
	path := verbs.SocketPath(n.cfg.Socket)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("verbs socket: %w", err)
	}
	return verbs.Listen(path)
}

// listen opens the API socket, readable and writable by its owner only
// (root), replacing a stale socket file.
func listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("api socket: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("api socket: %w", err)
	}
	return ln, nil
}

// ErrConfig marks a configuration Run could not load: the caller's mistake
// (exit 2), not the node's.
var ErrConfig = errors.New("node configuration")

// Run is a node process's whole life, as `rocelab node` and the slim
// rocelab-node binary run it: it loads the configuration deploy wrote at
// configPath, raises the threads' scheduling priority to nice (0: leave
// it; best effort, a docker node lacks CAP_SYS_NICE) and runs Main until
// ctx ends. ready, if not nil, is called once the node is ready (see
// Main).
func Run(ctx context.Context, configPath string, nice int, ready func(), log *slog.Logger) error {
	cfg, err := Load(configPath)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	log = log.With("node", cfg.Name)
	if nice != 0 {
		if err := RaisePriority(nice); err != nil {
			log.Debug("scheduling priority unchanged", "err", err)
		}
	}
	return runMain(ctx, cfg, ready, log, true)
}

// Main opens the node's AF_PACKET ports, runs the node until ctx ends
// (the command wires SIGTERM to it) and releases everything. ready, if not
// nil, runs on the loop's first turn, once the API listens: from then on
// /health answers ok (ReadyFD tells the process's starter).
func Main(ctx context.Context, cfg Config, ready func(), log *slog.Logger) (err error) {
	return runMain(ctx, cfg, ready, log, false)
}

// runMain is Main; alone says the node is its process's only loop (Run).
func runMain(ctx context.Context, cfg Config, ready func(), log *slog.Logger, alone bool) (err error) {
	ios, err := openIOs([]Config{cfg}, alone)
	if err != nil {
		return err
	}
	io := ios[0]
	defer func() { err = errors.Join(err, io.Close()) }()
	n, err := New(cfg, io, log)
	if err != nil {
		return err
	}
	return n.run(ctx, ready)
}

// dataWork is collective.Config.Offload for the node: offload, or nil
// (the work runs on the loop, at one instant of fabric time) when the
// node's loop has no link to another loop through a socket (a Group
// whose links are all in memory). A stalled loop delays nothing another
// loop sees then, while data work that takes wall time off the loop
// takes fabric time: at k = 500 a node filling its ranks' inputs for
// 10 ms started its iteration 20 µs late and cost the laptop's
// all-reduce a fifth of its busbw.
func (n *Node) dataWork() func(work, then func()) {
	if n.inline {
		return nil
	}
	return n.offload
}

// offload runs work on a goroutine of its own and then back on the loop
// (collective.Config.Offload): filling and checking a collective's data
// is megabytes of work that would otherwise stall the datapath. If the
// loop has stopped, then is dropped.
func (n *Node) offload(work, then func()) {
	go func() {
		work()
		n.loop.Post(then)
	}()
}

// emuPorts builds the loop's ports from a node's port configuration and
// its I/O: a MAC from the configuration, else the interface's own.
func emuPorts(cfg Config, io IO) []emu.Port {
	var ports []emu.Port
	for i, pc := range cfg.Ports {
		p := emu.Port{Name: pc.IfName, IO: io.Ports[i], Delay: pc.Delay, Keep: cfg.Kind == nodeapi.KindEndpoint, PeerLoop: pc.PeerLoop && cfg.ExactLinks}
		if pc.MAC != "" {
			p.MAC, _ = parseMAC(pc.MAC)
		} else if i < len(io.MACs) {
			p.MAC = io.MACs[i]
		}
		p.PeerMAC, _ = parseMAC(pc.PeerMAC)
		ports = append(ports, p)
	}
	return ports
}

// controlPlane returns the control plane of switch node cfg, whose ports
// are loop's ports base …: their MACs (as the loop writes them) and
// addresses, and the switch's loopbacks.
func controlPlane(cfg Config, loop *emu.Loop, base int) (*ctlplane.Plane, error) {
	ports := make([]ctlplane.Port, len(cfg.Ports))
	for i, pc := range cfg.Ports {
		ports[i] = ctlplane.Port{MAC: loop.PortMAC(base + i), Addrs: pc.Addrs}
	}
	return ctlplane.New(ports, cfg.Loopbacks...)
}
