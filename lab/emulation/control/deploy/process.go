package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

// nodeProc is a node process to start.
type nodeProc struct {
	node *topologies.Node
	cfg  node.Config
	// started is the process, once it runs.
	started proc.Process
	// group is the group of nodes whose process runs it, if any.
	group *unit
	// ready is the process's readiness pipe (a netns runtime's
	// processes; nil for a container's, which is polled).
	ready *readiness
}

// processes returns the node processes of the lab, in node order.
func (d *deployer) processes() ([]*nodeProc, error) {
	routes := fabric.Routes(d.t)
	var out []*nodeProc
	for _, n := range d.local {
		cfg, ok, err := d.processFor(n, routes)
		if err != nil {
			return nil, fmt.Errorf("config of %s: %w", n.Name, err)
		}
		if !d.opts.Origin.IsZero() {
			cfg.Origin = d.opts.Origin.UnixNano()
		}
		cfg.ExactLinks = d.opts.ExactLinks
		cfg.SocketLinks = d.opts.SocketLinks
		if ok {
			out = append(out, &nodeProc{node: n, cfg: cfg})
		}
	}
	return out, nil
}

// processFor returns the node config of n's process, or ok false for a
// node that runs none: switches run the switch model, hosts (and storage
// with BE ports) run the endpoint node with one RDMA NIC per BE port.
func (d *deployer) processFor(n *topologies.Node, routes map[string][]switchmodel.Route) (cfg node.Config, ok bool, err error) {
	switch n.Kind {
	case topologies.KindSwitch:
		cfg, err = nodeplan.Switch(n, routes[n.Name], d.scale, d.seed, d.path(n.Name, ".sock"), d.opts.LagBudget())
		return cfg, err == nil, err
	case topologies.KindHost, topologies.KindStorage:
		// The endpoint node owns the BE NICs; the FE NIC stays the
		// kernel's. A node with no BE port runs no process.
		cfg, err = nodeplan.Endpoint(n, d.scale, d.seed, d.path(n.Name, ".sock"))
		if errors.Is(err, nodeplan.ErrNoBackEnd) {
			return node.Config{}, false, nil
		}
		cfg.Hosts = nodeplan.Hosts(d.t)
		return cfg, err == nil, err
	}
	return node.Config{}, false, nil
}

// start writes p's config and starts its node process (state.NodeCommand)
// in its namespace, recording the process first. A docker node's process runs
// already, waiting for its config: start feeds it (startContainer).
func (d *deployer) start(p *nodeProc) error {
	if d.containerNodes() {
		return d.startContainer(p)
	}
	name := p.node.Name
	cfgPath, logPath := d.path(name, ".json"), d.path(name, ".log")
	if err := p.cfg.Write(cfgPath); err != nil {
		return err
	}
	d.mu.Lock()
	ns := d.ns[name]
	d.mu.Unlock()
	pr, ready, err := startNode(d.binary, []string{cfgPath}, ns, state.Dir(d.root, d.name), logPath, "")
	if err != nil {
		return err
	}
	p.started, p.ready = pr, ready
	nd := d.nodes[name]
	nd.PID, nd.StartTime = pr.PID, pr.StartTime
	nd.Socket, nd.Config, nd.Log = p.cfg.Socket, cfgPath, logPath
	return nil
}

// recordProcesses records the node processes of the netns runtime, in one
// write, before the start step starts any (recordProcesses' intents name
// the binary and the namespace: enough for a rollback to find a process
// whose PID was never written). It returns their IDs, in procs' order; a
// docker node's process is its container's, recorded with it.
func (d *deployer) recordProcesses(procs []*nodeProc) ([]int, error) {
	if d.containerNodes() {
		return nil, nil
	}
	objs := make([]state.Object, len(procs))
	d.mu.Lock()
	for i, p := range procs {
		objs[i] = state.Object{Kind: state.KindProcess, Node: p.node.Name, NetNS: d.procNSLocked(p), Name: state.NodeExecutable(d.binary)}
	}
	d.mu.Unlock()
	return d.intendAll(objs)
}

// processesStarted marks the processes of procs that started as created,
// with their PID and start time, in one write.
func (d *deployer) processesStarted(procs []*nodeProc, ids []int) error {
	var started []int
	var prs []proc.Process
	for i, id := range ids {
		if procs[i].started.PID != 0 {
			started = append(started, id)
			prs = append(prs, procs[i].started)
		}
	}
	return d.createdAll(started, func(i int, o *state.Object) { o.PID, o.StartTime = prs[i].PID, prs[i].StartTime })
}

// startContainer writes p's config into the FIFO its container's process
// waits on, then leaves a regular copy at the same path. The container
// (recorded when it was created) is the process's record.
func (d *deployer) startContainer(p *nodeProc) error {
	name := p.node.Name
	d.mu.Lock()
	c, ok := d.containers[name]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("node %s has no container", name)
	}
	cfgPath, tmp := d.path(name, ".json"), d.path(name, ".json.tmp")
	if err := p.cfg.Write(tmp); err != nil {
		return err
	}
	b, err := os.ReadFile(tmp)
	if err == nil {
		err = feedConfig(cfgPath, b)
	}
	if err == nil {
		err = os.Rename(tmp, cfgPath)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w%s", err, d.containerLog(name))
	}
	p.started = c.Process
	nd := d.nodes[name]
	nd.PID, nd.StartTime = c.Process.PID, c.Process.StartTime
	nd.Socket, nd.Config = p.cfg.Socket, cfgPath
	return nil
}

// startNode starts the node of cfgPath (rocelab-node beside binary, else
// `binary node`: state.NodeCommand; several configs: a group of nodes)
// in namespace ns with working directory dir, its output appended to
// logPath after a line banner (if any), and returns it with its readiness
// pipe (--ready-fd). The node outlives the caller; a goroutine reaps it
// if it exits while the caller runs.
func startNode(binary string, cfgPaths []string, ns, dir, logPath, banner string) (proc.Process, *readiness, error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return proc.Process{}, nil, fmt.Errorf("node log: %w", err)
	}
	defer log.Close()
	if banner != "" {
		fmt.Fprintln(log, banner)
	}
	ready, w, err := newReadiness()
	if err != nil {
		return proc.Process{}, nil, err
	}
	defer w.Close() // the child has its own copy
	argv := append(state.NodeCommand(binary, cfgPaths...), "--ready-fd", strconv.Itoa(readyFD))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{w} // readyFD
	pr, err := netns.Start(ns, cmd)
	if err != nil {
		ready.close()
		return proc.Process{}, nil, err
	}
	go cmd.Wait()
	return pr, ready, nil
}

// waitHealthy waits until p's process is ready (its readiness pipe, else
// polling /health), dies or HealthTimeout passes; failures carry the tail
// of the node's log.
func (d *deployer) waitHealthy(ctx context.Context, p *nodeProc) error {
	logTail := func() string { return d.nodeLog(p.node.Name) }
	if p.ready != nil {
		return p.ready.wait(ctx, p.started, d.opts.HealthTimeout, logTail)
	}
	return awaitHealthy(ctx, p.cfg.Socket, p.started, d.opts.HealthTimeout, logTail)
}

// closeReady releases the readiness pipes of procs (those waited on are
// closed already).
func closeReady(procs []*nodeProc) {
	for _, p := range procs {
		if p.ready != nil {
			p.ready.close()
		}
	}
}

// awaitHealthy polls socket's /health until it answers ok, process pr
// dies or timeout (default 30 s) passes; failures end with logTail()
// (nodeapi.Client.WaitHealthy).
func awaitHealthy(ctx context.Context, socket string, pr proc.Process, timeout time.Duration, logTail func() string) error {
	c := nodeapi.NewClient(socket)
	defer c.Close()
	exited := func() error {
		if !pr.Alive() {
			return fmt.Errorf("node process %v exited", pr)
		}
		return nil
	}
	return c.WaitHealthy(ctx, timeout, exited, logTail)
}

// nodeLog is the tail of node's output, formatted for an error.
func (d *deployer) nodeLog(node string) string {
	if d.containerNodes() {
		return d.containerLog(node)
	}
	return logTail(d.path(node, ".log"))
}

// logTail returns the last lines of a node log, formatted for an error.
func logTail(path string) string { return nodeapi.LogTail(path, 10) }

// containerNodes says whether the runtime's nodes are containers that run
// their node process themselves (sandbox.ContainerNodes): then deploy
// records containers, feeds each process its config, and reads its log
// from the runtime; otherwise it starts and records the processes itself.
func (d *deployer) containerNodes() bool {
	_, ok := d.rt.(sandbox.ContainerNodes)
	return ok
}
