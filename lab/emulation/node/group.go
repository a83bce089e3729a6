package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// Group is several nodes (switches and endpoints) in one process, their
// models on one emu.Loop: one wake-up reads the frames of every member's ports, runs
// every event due across their models and writes what they sent, where
// nodes of their own would each wake for their share (docs/performance.md
// measures what that saves). A link between two members carries its
// frames in memory, from one model to the other, unless the members'
// Config.SocketLinks says to use its veth (emu.Options.InLoopLinks). Each member keeps its own API socket,
// faults, captures and telemetry; the loop's own counters (lag, wake-ups,
// CPU) and the process's (node_cpu_seconds_total, heap, goroutines) are
// reported by the first member only, so that sums over nodes count them
// once, but every member reports its clock (emu_fabric_seconds_total,
// emu_scale_factor: memberClock), which real-unit rates divide by. The
// members live and die
// together: /shutdown on any of them stops the group.
type Group struct {
	loop  *emu.Loop
	nodes []*Node
}

// NewGroup builds the nodes of cfgs on one loop over ios (one IO per
// config, as openIOs returns them: the loop numbers the ports of all
// members in order, and ios[0] carries the Waiter watching them all).
// Every member must have the lab's scale, seed and origin.
func NewGroup(cfgs []Config, ios []IO, log *slog.Logger) (*Group, error) {
	if len(cfgs) == 0 || len(ios) != len(cfgs) {
		return nil, fmt.Errorf("node group: %d configurations, %d port sets", len(cfgs), len(ios))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	first := cfgs[0]
	var ports []emu.Port
	var own [][]emu.Port // each member's
	for k, cfg := range cfgs {
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
		}
		switch {
		case cfg.Scale != first.Scale || cfg.Seed != first.Seed || cfg.Origin != first.Origin:
			return nil, fmt.Errorf("node %s: scale, seed or origin differ from %s's: one loop runs one clock", cfg.Name, first.Name)
		case cfg.SocketLinks != first.SocketLinks || cfg.ExactLinks != first.ExactLinks:
			return nil, fmt.Errorf("node %s: socket or exact links differ from %s's: one loop carries its links one way", cfg.Name, first.Name)
		case len(ios[k].Ports) != len(cfg.Ports):
			return nil, fmt.Errorf("node %s: %d port I/Os for %d ports", cfg.Name, len(ios[k].Ports), len(cfg.Ports))
		}
		own = append(own, emuPorts(cfg, ios[k]))
		ports = append(ports, own[k]...)
	}
	loop, err := emu.New(emu.Options{
		Name: first.Name, Scale: first.Scale, Seed: first.Seed, Ports: ports, Waiter: ios[0].Waiter, Recycle: true, Origin: first.OriginTime(),
		Lead: first.lead(), InLoopLinks: !first.SocketLinks,
	})
	if err != nil {
		return nil, fmt.Errorf("node group %s: %w", first.Name, err)
	}
	g := &Group{loop: loop}
	alone := !first.SocketLinks && linksInside(cfgs, own)
	base := 0
	for k, cfg := range cfgs {
		share, leader, nlog := loop.Share(cfg.Name, base, len(cfg.Ports), k == 0), k == 0, log.With("node", cfg.Name)
		var n *Node
		var err error
		if cfg.Kind == nodeapi.KindEndpoint {
			n, err = newEndpointOn(cfg, loop, base, own[k], share, leader, nlog)
		} else {
			n, err = newSwitch(cfg, loop, base, share, leader, nlog)
		}
		if err != nil {
			return nil, err
		}
		n.inline = alone
		if !leader {
			n.srcs = append(n.srcs, memberClock{cfg.Name, loop})
		}
		g.nodes = append(g.nodes, n)
		base += len(cfg.Ports)
	}
	return g, nil
}

// linksInside reports whether every port of the members whose neighbour
// is a node (PortConfig.PeerLoop) is cabled to another member: then no
// link leaves the group's loop through a socket.
func linksInside(cfgs []Config, ports [][]emu.Port) bool {
	macs := map[[6]byte]bool{}
	for _, ps := range ports {
		for _, p := range ps {
			macs[p.MAC] = true
		}
	}
	for k, cfg := range cfgs {
		for i, pc := range cfg.Ports {
			if pc.PeerLoop && !macs[ports[k][i].PeerMAC] {
				return false
			}
		}
	}
	return true
}

// Run serves every member's API and drives the loop until ctx ends or a
// client posts /shutdown to any member, then stops them all.
func (g *Group) Run(ctx context.Context) error { return g.run(ctx, nil) }

// run is Run, calling ready (if not nil) on the loop's first turn, once
// every member's API listens.
func (g *Group) run(ctx context.Context, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for i, stop := range stops {
			if err := stop(); err != nil {
				errs = append(errs, fmt.Errorf("node %s: api: %w", g.nodes[i].cfg.Name, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, n := range g.nodes {
		stop, err := n.serve(ctx, cancel)
		if err != nil {
			cancel()
			return errors.Join(err, stopAll())
		}
		stops = append(stops, stop)
	}
	if ready != nil {
		g.loop.Post(ready)
	}
	runErr := g.loop.Run(ctx)
	cancel()
	if runErr != nil {
		runErr = fmt.Errorf("node group %s: %w", g.nodes[0].cfg.Name, runErr)
	}
	return errors.Join(runErr, stopAll())
}

// MainGroup opens the ports of every member (each in its Config.NetNS:
// the process itself may run in none of them), runs the group until ctx
// ends and releases everything.
func MainGroup(ctx context.Context, cfgs []Config, ready func(), log *slog.Logger) (err error) {
	return runGroup(ctx, cfgs, ready, log, false)
}

// runGroup is MainGroup; alone says the group is its process's only loop
// (RunGroup).
func runGroup(ctx context.Context, cfgs []Config, ready func(), log *slog.Logger, alone bool) (err error) {
	ios, err := openIOs(cfgs, alone)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ios[0].Close()) }()
	g, err := NewGroup(cfgs, ios, log)
	if err != nil {
		return err
	}
	return g.run(ctx, ready)
}

// RunGroup is a group process's whole life, as `rocelab-node --config A
// --config B …` runs it: Run's, for several configurations.
func RunGroup(ctx context.Context, configPaths []string, nice int, ready func(), log *slog.Logger) error {
	var cfgs []Config
	for _, path := range configPaths {
		cfg, err := Load(path)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		cfgs = append(cfgs, cfg)
	}
	if nice != 0 {
		if err := RaisePriority(nice); err != nil {
			log.Debug("scheduling priority unchanged", "err", err)
		}
	}
	return runGroup(ctx, cfgs, ready, log, true)
}

// RunConfigs runs the node of one configuration (Run) or, given several,
// the Group of them (RunGroup): what a node process's --config flags say.
// ready, if not nil, is called once every node of the process is ready.
func RunConfigs(ctx context.Context, configPaths []string, nice int, ready func(), log *slog.Logger) error {
	if len(configPaths) == 1 {
		return Run(ctx, configPaths[0], nice, ready, log)
	}
	return RunGroup(ctx, configPaths, nice, ready, log)
}

// ReadyFD returns the ready function of a node process whose starter
// waits on file descriptor fd (a pipe it passed, the flag --ready-fd): it
// writes ReadyLine there and closes it. A starter that reads end of file
// first knows the process died before it was ready, at once, without
// polling /health.
func ReadyFD(fd int) (func(), error) {
	if fd < 3 {
		return nil, fmt.Errorf("%w: --ready-fd %d: want a descriptor the starter passed (3 or more)", ErrConfig, fd)
	}
	f := os.NewFile(uintptr(fd), "ready")
	if f == nil {
		return nil, fmt.Errorf("%w: --ready-fd %d: not a descriptor", ErrConfig, fd)
	}
	return func() {
		f.WriteString(ReadyLine)
		f.Close()
	}, nil
}

// ReadyLine is what ReadyFD writes once the node is ready.
const ReadyLine = "ready\n"
