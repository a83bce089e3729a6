// Package labsource reads a deployed emulation lab for the dashboards:
// every node's telemetry, ports and faults over the node's API, all nodes
// at once, each with a deadline, so that one dead node is reported as down
// rather than stalling the scrape.
package labsource

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/emulation/tools/stats"
	"github.com/rocelab/rocelab/topologies"
)

// Lab is a metrics.Source over one deployed lab.
type Lab struct {
	root, name string
	nodes      []deploy.Node // the node processes, as deployed

	mu      sync.Mutex
	ports   map[string][]metrics.Port  // by node, once read
	clients map[string]*nodeapi.Client // by socket
}

// Open finds the lab called name under root (the one deployed lab when
// name is ""); the error wraps deploy.ErrPickLab when that is ambiguous.
func Open(ctx context.Context, root, name string) (*Lab, error) {
	l, err := deploy.OnlyLab(ctx, root, name)
	if err != nil {
		return nil, err
	}
	var nodes []deploy.Node
	for _, n := range l.Nodes {
		if n.Socket != "" {
			nodes = append(nodes, n)
		}
	}
	return &Lab{root: root, name: l.Name, nodes: nodes, ports: map[string][]metrics.Port{}, clients: map[string]*nodeapi.Client{}}, nil
}

// Name returns the lab's name.
func (l *Lab) Name() string { return l.name }

// Close releases the node connections.
func (l *Lab) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.clients {
		c.Close()
	}
	l.clients = map[string]*nodeapi.Client{}
}

func (l *Lab) client(socket string) *nodeapi.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[socket]
	if c == nil {
		c = nodeapi.NewClient(socket)
		l.clients[socket] = c
	}
	return c
}

// Topology loads the lab's topology as deployed (its source file, else the
// built-in of its name).
func (l *Lab) Topology(ctx context.Context) (*topologies.Topology, error) {
	st, err := deploy.OnlyLab(ctx, l.root, l.name)
	if err != nil {
		return nil, err
	}
	if st.Source != "" {
		if _, err := os.Stat(st.Source); err == nil {
			return topologies.Load(st.Source)
		}
	}
	t, err := topologies.Builtin(st.Topology)
	if err != nil {
		return nil, fmt.Errorf("lab %s: topology %s (source %s) cannot be read: %w", l.name, st.Topology, st.Source, err)
	}
	return t, nil
}

// Read reads every node that runs a process, concurrently. A node that
// does not answer within ctx is down in the reading.
func (l *Lab) Read(ctx context.Context) (metrics.Reading, error) {
	r := metrics.Reading{Lab: l.name}
	nodes := l.nodes
	r.Nodes = make([]metrics.NodeReading, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Nodes[i] = l.readNode(ctx, n)
		}()
	}
	wg.Wait()
	return r, nil
}

func (l *Lab) readNode(ctx context.Context, n deploy.Node) metrics.NodeReading {
	out := metrics.NodeReading{Name: n.Name, Kind: string(n.Kind)}
	c := l.client(n.Socket)
	fail := func(what string, err error) metrics.NodeReading {
		out.Up, out.Err = false, fmt.Sprintf("%s: %v", what, err)
		return out
	}
	ports, err := l.nodePorts(ctx, c, n)
	if err != nil {
		return fail("info", err)
	}
	samples, err := c.Telemetry(ctx)
	if err != nil {
		return fail("telemetry", err)
	}
	fis, err := c.Faults(ctx)
	if err != nil {
		return fail("faults", err)
	}
	out.Up, out.Ports, out.Samples = true, ports, samples
	out.FabricTime = telemetry.Sum(samples, "emu_fabric_seconds_total")
	for _, fi := range fis {
		out.Faults = append(out.Faults, metrics.Fault{ID: n.Name + "/" + fi.ID, Spec: fi.Spec, Targets: fi.Targets, Packets: fi.Packets})
	}
	return out
}

// nodePorts returns the node's ports, named as in the topology, reading
// /info once per node.
func (l *Lab) nodePorts(ctx context.Context, c *nodeapi.Client, n deploy.Node) ([]metrics.Port, error) {
	l.mu.Lock()
	p, ok := l.ports[n.Name]
	l.mu.Unlock()
	if ok {
		return p, nil
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // ifname → port
	for _, itf := range n.Interfaces {
		if port, ifname, ok := strings.Cut(itf, "="); ok {
			names[ifname] = port
		}
	}
	for _, pi := range info.Ports {
		name := names[pi.IfName]
		if name == "" {
			name = stats.PortName(strconv.Itoa(pi.Index))
		}
		p = append(p, metrics.Port{Name: name, Rate: pi.Rate})
	}
	l.mu.Lock()
	l.ports[n.Name] = p
	l.mu.Unlock()
	return p, nil
}
