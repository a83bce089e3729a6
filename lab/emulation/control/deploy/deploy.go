package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/topologies"
)

// ErrExists is returned by Deploy for a lab that already exists.
var ErrExists = errors.New("lab exists")

// MaxLinks is the most links one machine's part of a lab may have: a
// 1,024-host three-tier Clos has about 3,100; the seed's 24,576-GPU
// cluster (75,264) is the simulator's.
const MaxLinks = 16384

// ErrOptions marks options that do not go together (the caller's mistake).
var ErrOptions = errors.New("options")

// LinkOverhead is added to a link's IP MTU on the veth pair (see the
// package comment).
const LinkOverhead = 64

// Step is a stage of a deploy.
type Step string

// Steps, in order.
const (
	StepNode    Step = "node"    // a namespace was created
	StepLink    Step = "link"    // a veth pair was created
	StepAddress Step = "address" // a host's FE NIC was addressed
	StepStart   Step = "start"   // a node process was started
	StepHealthy Step = "healthy" // a node answered /health
)

// Event reports one finished unit of work, for a progress display.
type Event struct {
	Step Step `json:"step"`
	// Name is the node, or the link ("a:p -- b:q").
	Name string `json:"name"`
	// Done of Total units of this step are finished.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Elapsed since the step began.
	Elapsed time.Duration `json:"elapsed"`
}

// Options configure Deploy.
type Options struct {
	Topology *topologies.Topology
	// LabName names the lab (default: the topology's name).
	LabName string
	// Runtime gives nodes their network stack; nil is the netns runtime.
	Runtime sandbox.Runtime
	// Root is the run directory root (state.DefaultRoot if "").
	Root string
	// Binary is the rocelab executable that runs node processes
	// (default: os.Executable).
	Binary string
	// Scale is the scale factor k; 0 picks it (AutoScale).
	Scale int
	// CapacityPPS is the machine's forwarding capacity for Scale 0
	// (default DefaultCapacityPPSPerCPU × CPUs; for a lab in one node
	// group, DefaultGroupCapacityPPS).
	CapacityPPS float64
	// Seed seeds the nodes' random streams (0 = 1).
	Seed uint64
	// Workers bounds parallel creation (default 8).
	Workers int
	// HealthTimeout is how long a node process may take to answer
	// /health (default 30 s).
	HealthTimeout time.Duration
	// Progress, if set, is called (from one goroutine at a time) after
	// every finished unit of work.
	Progress func(Event)
	// Hook, if set, runs before each unit of work of each step; an error
	// fails the deploy there (tests inject failures with it).
	Hook func(step Step, name string) error
	// Part, if set, deploys one machine's share of a lab that spans
	// machines (see Part).
	Part *Part
	// Origin, if not zero, is fabric time 0 of every node: a lab-wide
	// instant (CLOCK_REALTIME) that the nodes on every machine share.
	// Zero: each node's own start (across machines: the deploy's start).
	Origin time.Time
	// NodeGroups, if above 0, runs the lab's node processes (switches and
	// endpoints) as that many processes (fewer if there are fewer nodes),
	// each a node.Group whose models share one loop, instead of a process
	// per node: fewer wake-ups, processes and memory for the same traffic
	// (docs/performance.md). The netns runtime on one machine only.
	// Members live and die together: restarting one restarts its group.
	NodeGroups int
	// ExactLinks has frames between two nodes carry how late their sender
	// wrote them, so that each link's delay is exact in fabric time (emu
	// package doc, "Trailers"), and lets the node loops run ahead of the
	// wall clock ("Running ahead"): closer agreement with the simulator
	// (PFC frame counts), a quarter less CPU per frame and a smaller
	// lossless k (docs/performance.md). The CLI sets it on one machine.
	// Not across agents.
	ExactLinks bool
	// SocketLinks has a link between two nodes of one group (NodeGroups)
	// carry its frames through its veth, where tcpdump in either
	// namespace sees them, instead of in memory from one model to the
	// other (node.Config.SocketLinks): that costs each frame a system
	// call at each end and the loop a wake-up (docs/performance.md).
	SocketLinks bool
}

// deployer carries one deploy.
type deployer struct {
	opts   Options
	t      *topologies.Topology
	name   string
	root   string
	binary string
	scale  int
	// scaleBasis is Lab.ScaleBasis.
	scaleBasis string
	seed       uint64
	rt         sandbox.Runtime
	// part is Options.Part; local and links are the nodes and links this
	// deploy creates (all, without a part).
	part  *Part
	local []*topologies.Node
	links []*topologies.Link

	mu    sync.Mutex // guards books and progress
	books *state.Lab
	ns    map[string]string // node → namespace name
	nodes map[string]*Node
	// containers are the docker runtime's nodes, by node name.
	containers map[string]sandbox.Node
	timing     []Timing
	waits      []string // what the deploy waited for (Lab.Waits), under mu
	// maker creates the veth pairs of the link step.
	maker *links.Maker
}

// Deploy builds the lab described by o and returns it. On error nothing
// it created is left (see the package comment).
func Deploy(ctx context.Context, o Options) (*Lab, error) {
	switch {
	case o.NodeGroups < 0:
		return nil, fmt.Errorf("deploy: %w: node groups %d: want a count of processes, or 0 for a process per node", ErrOptions, o.NodeGroups)
	case o.Topology != nil && len(o.Topology.Links) > MaxLinks:
		return nil, fmt.Errorf("deploy: %w: topology %s has %d links; one machine deploys at most %d (a veth pair and a forwarding port each): run it in the simulator (rocelab run --sim), or split it over machines (docs/multi-machine.md)",
			ErrOptions, o.Topology.Name, len(o.Topology.Links), MaxLinks)
	}
	d, err := newDeployer(o)
	if err != nil {
		return nil, err
	}
	if err := d.ensureImage(ctx); err != nil {
		return nil, fmt.Errorf("deploy lab %s: %w", d.name, err)
	}
	l, err := state.Open(d.root, d.name, false)
	if errors.Is(err, state.ErrBusy) {
		return nil, fmt.Errorf("deploy lab %s: %w (a deploy or destroy of it is running)", d.name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("deploy lab %s: %w", d.name, err)
	}
	if len(l.Objects()) > 0 || l.Info("topology") != "" {
		l.Close()
		return nil, fmt.Errorf("deploy lab %s: %w (destroy it first: rocelab destroy --name %s)", d.name, ErrExists, d.name)
	}
	d.books = l
	lab, err := d.run(ctx)
	if err != nil {
		if _, cerr := removeContainers(context.WithoutCancel(ctx), l); cerr != nil {
			err = errors.Join(err, cerr)
		}
		teardown(l, 2*time.Second)
		rerr := lifecycle.Rollback(l, 2*time.Second)
		if rerr == nil {
			rerr = l.Remove()
		} else {
			l.Close()
		}
		if rerr != nil {
			err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return nil, fmt.Errorf("deploy lab %s: %w", d.name, err)
	}
	return lab, l.Close()
}

func newDeployer(o Options) (*deployer, error) {
	if o.Topology == nil {
		return nil, errors.New("deploy: no topology")
	}
	d := &deployer{opts: o, t: o.Topology, name: o.LabName, root: o.Root, binary: o.Binary, scale: o.Scale, seed: o.Seed, rt: o.Runtime,
		ns: map[string]string{}, nodes: map[string]*Node{}, containers: map[string]sandbox.Node{}}
	if d.name == "" {
		d.name = d.t.Name
	}
	if err := state.ValidName(d.name); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if d.root == "" {
		d.root = state.DefaultRoot
	}
	if !filepath.IsAbs(d.root) {
		abs, err := filepath.Abs(d.root)
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		d.root = abs
	}
	if d.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		d.binary = exe
	}
	if fi, err := os.Stat(d.binary); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("deploy: node binary %s is not an executable file", d.binary)
	}
	if d.scale < 0 {
		return nil, fmt.Errorf("deploy: scale %d: want a positive factor or 0 (auto)", d.scale)
	}
	if d.scale == 0 {
		d.scale, d.scaleBasis = o.PickScale()
	}
	if d.seed == 0 {
		d.seed = 1
	}
	if d.rt == nil {
		d.rt = netnsRuntime()
	}
	if err := checkRuntimeFits(d.t, d.rt); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	if o.NodeGroups > 0 && d.containerNodes() {
		return nil, fmt.Errorf("deploy: %w: node groups need the netns runtime, not %s: a container holds one node", ErrOptions, d.rt.Name())
	}
	if err := d.t.Address(d.name); err != nil {
		return nil, fmt.Errorf("deploy: address plan for lab %s: %w", d.name, err)
	}
	if d.part = o.Part; d.part != nil {
		if err := d.part.check(d.t); err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
	}
	d.local, d.links = d.localNodes(), d.localLinks()
	// The API socket path must fit sun_path (108 bytes with its NUL).
	for _, n := range d.t.Nodes {
		if s := d.path(n.Name, ".sock"); len(s) > 107 {
			return nil, fmt.Errorf("deploy: socket path %s is longer than 107 bytes: use a shorter root or lab name", s)
		}
	}
	if err := d.verbsPathsFit(); err != nil {
		return nil, err
	}
	return d, nil
}

// ensureImage builds the docker runtime's node image, and checks that the
// user's images and bind sources are there, before anything is created (a
// no-op for other runtimes), so that a binary that cannot go into the
// image or a missing image fails the deploy with nothing to roll back.
func (d *deployer) ensureImage(ctx context.Context) error {
	rt, ok := d.rt.(sandbox.Images)
	if !ok {
		return nil
	}
	if err := rt.PrepareNodeImage(ctx); err != nil {
		if strings.Contains(err.Error(), "dynamically linked") {
			return fmt.Errorf("%w (`make build` builds a static one: the Makefile sets CGO_ENABLED=0)", err)
		}
		return fmt.Errorf("docker node image: %w", err)
	}
	return checkUserImages(ctx, rt, d.t)
}

// path is the run-directory file of node with suffix.
func (d *deployer) path(node, suffix string) string {
	return filepath.Join(state.Dir(d.root, d.name), node+suffix)
}

// run does steps 2 to 5.
func (d *deployer) run(ctx context.Context) (*Lab, error) {
	for k, v := range map[string]string{
		"topology": d.t.Name, "source": d.t.Source, "runtime": d.rt.Name(),
		"scale": strconv.Itoa(d.scale), "seed": strconv.FormatUint(d.seed, 10), "binary": d.binary,
		"machine": d.machine(),
	} {
		if err := d.books.SetInfo(k, v); err != nil {
			return nil, err
		}
	}
	if text := d.t.Text(); text != nil {
		if err := os.WriteFile(filepath.Join(state.Dir(d.root, d.name), TopologyFile), text, 0o600); err != nil {
			return nil, fmt.Errorf("keep the topology: %w", err)
		}
	}
	if err := d.installVerbs(); err != nil {
		return nil, err
	}
	for _, n := range d.local {
		d.nodes[n.Name] = &Node{Name: n.Name, Kind: n.Kind, Role: n.Role}
	}
	var linkNames []string
	for _, l := range d.links {
		linkNames = append(linkNames, l.AName+" -- "+l.BName)
	}
	// The netns runtime records each step's objects in one write of the
	// state file before creating any of them (a write per object made the
	// books cost seconds on ai-zone-64's 1,124 links).
	var nodeIDs []int
	if !d.containerNodes() {
		var err error
		if nodeIDs, err = d.recordNodes(); err != nil {
			return nil, err
		}
	}
	if err := d.each(ctx, StepNode, nodeNames(d.local), func(i int) error {
		if d.containerNodes() {
			return d.createContainer(ctx, d.local[i])
		}
		return d.createNode(d.local[i], nodeIDs[i])
	}); err != nil {
		return nil, err
	}
	if err := d.createdAll(nodeIDs, nil); err != nil {
		return nil, err
	}
	if err := d.recordLinks(); err != nil {
		return nil, err
	}
	d.maker = &links.Maker{OwnNamespaces: true, Waited: d.waited}
	defer d.maker.Close()
	if err := d.each(ctx, StepLink, linkNames, func(i int) error {
		return d.createLink(d.links[i])
	}); err != nil {
		return nil, err
	}
	if err := d.linksUp(); err != nil {
		return nil, err
	}
	fe := d.feNodes()
	if err := d.each(ctx, StepAddress, nodeNames(fe), func(i int) error {
		return d.address(fe[i])
	}); err != nil {
		return nil, err
	}
	procs, err := d.processes()
	if err != nil {
		return nil, err
	}
	var procNodes []*topologies.Node
	for _, p := range procs {
		procNodes = append(procNodes, p.node)
	}
	units := d.units(procs)
	procIDs, err := d.recordProcesses(procs)
	if err != nil {
		return nil, err
	}
	defer closeReady(procs)
	err = d.each(ctx, StepStart, unitNames(units), func(i int) error {
		return d.startUnit(units[i])
	})
	// The processes that started get their PID and start time, whatever
	// happened to the others, so that a rollback stops them by identity.
	if cerr := d.processesStarted(procs, procIDs); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := d.each(ctx, StepHealthy, nodeNames(procNodes), func(i int) error {
		return d.waitHealthy(ctx, procs[i])
	}); err != nil {
		return nil, err
	}
	if err := d.checkUserContainers(ctx); err != nil {
		return nil, err
	}
	lab := d.result()
	if err := WriteRecord(lab); err != nil {
		return nil, fmt.Errorf("write %s: %w", LabFile, err)
	}
	return lab, nil
}

// machine is the name of the machine whose share this deploy makes, ""
// for a lab on one machine.
func (d *deployer) machine() string {
	if d.part == nil {
		return ""
	}
	return d.part.Machine
}

func nodeNames(nodes []*topologies.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

// each runs fn for every unit (names[i]) of step on up to Workers
// goroutines, the Hook first, stopping at the first error (wrapped with
// the step and name) or when ctx ends.
func (d *deployer) each(ctx context.Context, step Step, names []string, fn func(i int) error) error {
	n := len(names)
	start := time.Now()
	workers := d.opts.Workers
	if workers <= 0 {
		workers = 8
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		next  int
		done  int
		first error
		pick  sync.Mutex
	)
	fail := func(err error) {
		pick.Lock()
		if first == nil {
			first = err
		}
		pick.Unlock()
		cancel()
	}
	for range min(workers, n) {
		wg.Go(func() {
			for {
				if wctx.Err() != nil {
					return
				}
				pick.Lock()
				i := next
				next++
				pick.Unlock()
				if i >= n {
					return
				}
				name := names[i]
				var err error
				if d.opts.Hook != nil {
					err = d.opts.Hook(step, name)
				}
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					fail(fmt.Errorf("%s %s: %w", step, name, err))
					return
				}
				d.mu.Lock()
				done++
				if d.opts.Progress != nil {
					d.opts.Progress(Event{Step: step, Name: name, Done: done, Total: n, Elapsed: time.Since(start)})
				}
				d.mu.Unlock()
			}
		})
	}
	wg.Wait()
	d.timing = append(d.timing, Timing{Step: step, Count: n, Elapsed: time.Since(start)})
	if first != nil {
		return first
	}
	if done < n {
		return fmt.Errorf("%s: %w", step, context.Cause(ctx))
	}
	return nil
}

// intend, intendAll, created and createdAll record objects under the lock
// (workers share books).
func (d *deployer) intendAll(objs []state.Object) ([]int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.books.IntendAll(objs)
}

func (d *deployer) createdAll(ids []int, update func(i int, o *state.Object)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.books.CreatedAll(ids, update)
}

func (d *deployer) intend(o state.Object) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.books.Intend(o)
}

func (d *deployer) created(id int, update func(*state.Object)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.books.Created(id, update)
}

// feNodes are the hosts and storage nodes with an FE port.
func (d *deployer) feNodes() []*topologies.Node {
	var out []*topologies.Node
	for _, n := range d.local {
		if n.Kind == topologies.KindSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p.Plane == topologies.FE {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// result assembles the Lab.
func (d *deployer) result() *Lab {
	lab := &Lab{Name: d.name, Topology: d.t.Name, Source: d.t.Source, Runtime: d.rt.Name(), Dir: state.Dir(d.root, d.name),
		Scale: d.scale, ScaleBasis: d.scaleBasis, Seed: d.seed, Binary: d.binary, Created: time.Now().UTC(), Timings: d.timing, Waits: d.waits,
		Machine: d.machine(), Origin: d.opts.Origin}
	for _, n := range d.local {
		nd := d.nodes[n.Name]
		nd.NetNS = d.ns[n.Name]
		for _, p := range n.Ports {
			nd.Interfaces = append(nd.Interfaces, p.Name+"="+p.IfName)
		}
		lab.Nodes = append(lab.Nodes, *nd)
	}
	return lab
}

// waited records what the link step waited for (links.Maker.Waited).
func (d *deployer) waited(what string, took time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waits = append(d.waits, fmt.Sprintf("waited %v for %s", took.Round(time.Millisecond), what))
}
