package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/cluster/agentapi"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

// StepPart is the step of a deploy across machines: a machine's agent
// deployed its part.
const StepPart deploy.Step = "part"

// agentTimeout bounds the first call to an agent: an agent that does not
// answer within it is reported as unreachable.
const agentTimeout = 10 * time.Second

// deployAcross deploys o.Topology over the machines of o.Agents: it asks
// each agent for its machine, places the lab (package placement), records
// a part per machine, has every agent deploy its part in parallel — all
// with one scale, seed and fabric-time origin — and writes a deploy.Lab whose
// nodes are reached through their agents. If any part fails, every agent
// destroys its part again and nothing is left here either.
func deployAcross(ctx context.Context, o deploy.Options, agentAddrs []string) (*deploy.Lab, error) {
	t := o.Topology
	name := o.LabName
	if name == "" {
		name = t.Name
	}
	if err := state.ValidName(name); err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	switch {
	case o.Runtime != nil:
		return nil, fmt.Errorf("deploy %s: a lab across machines runs on its agents' netns runtime: give no runtime", name)
	case o.Part != nil:
		return nil, fmt.Errorf("deploy %s: a part and agents exclude each other", name)
	case t.Text() == nil:
		return nil, fmt.Errorf("deploy %s: the topology has no file text to send to the agents", name)
	case t.HasContainers():
		return nil, fmt.Errorf("deploy %s: user images (the docker runtime) do not run across machines yet", name)
	}
	root := state.RootOr(o.Root)
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	agents, infos, err := askAgents(ctx, agentAddrs)
	defer func() {
		for _, a := range agents {
			a.Close()
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("deploy %s: %w", name, err)
	}
	var ms []placement.Machine
	under := map[string]netip.Addr{}
	for _, in := range infos {
		ms = append(ms, placement.Machine{Name: in.Machine, Weight: in.CapacityPPS})
		under[in.Machine] = in.Underlay
	}
	if err := t.Address(name); err != nil {
		return nil, fmt.Errorf("deploy: address plan for lab %s: %w", name, err)
	}
	pl, err := placement.Place(t, name, ms)
	if err != nil {
		return nil, fmt.Errorf("deploy %s: %w", name, err)
	}
	scale, basis := o.Scale, ""
	if scale == 0 {
		scale, basis = acrossScale(t, pl, infos)
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	origin := o.Origin
	if origin.IsZero() {
		origin = time.Now()
	}

	books, err := state.Open(root, name, false)
	if errors.Is(err, state.ErrBusy) {
		return nil, fmt.Errorf("deploy lab %s: %w (a deploy or destroy of it is running)", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("deploy lab %s: %w", name, err)
	}
	if len(books.Objects()) > 0 || books.Info("topology") != "" {
		books.Close()
		return nil, fmt.Errorf("deploy lab %s: %w (destroy it first: rocelab destroy --name %s)", name, deploy.ErrExists, name)
	}
	lab, err := deployParts(ctx, o, books, agents, infos, partRequest{name: name, t: t, pl: pl, under: under, scale: scale, seed: seed, origin: origin})
	if err != nil {
		rerr := removeParts(context.WithoutCancel(ctx), books)
		if rerr == nil {
			rerr = books.Remove()
		} else {
			books.Close()
			rerr = fmt.Errorf("rollback: %w", rerr)
		}
		return nil, fmt.Errorf("deploy lab %s: %w", name, errors.Join(err, rerr))
	}
	lab.ScaleBasis = basis
	if err := deploy.WriteRecord(lab); err != nil {
		books.Close()
		return nil, fmt.Errorf("write %s: %w", deploy.LabFile, err)
	}
	return lab, books.Close()
}

// askAgents asks every agent for its machine, in parallel; the error names
// each agent that did not answer and each machine named twice.
func askAgents(ctx context.Context, addrs []string) ([]*agentapi.Client, []agentapi.Info, error) {
	agents := make([]*agentapi.Client, len(addrs))
	infos := make([]agentapi.Info, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		agents[i] = agentapi.NewClient(a)
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, agentTimeout)
			defer cancel()
			infos[i], errs[i] = agents[i].Info(cctx)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return agents, nil, err
	}
	seen := map[string]string{}
	for i, in := range infos {
		if prev, ok := seen[in.Machine]; ok {
			return agents, nil, fmt.Errorf("agents %s and %s both run machine %s", prev, agents[i].URL(), in.Machine)
		}
		seen[in.Machine] = agents[i].URL()
		if !in.Underlay.IsValid() {
			return agents, nil, fmt.Errorf("agent %s (machine %s) has no underlay address", agents[i].URL(), in.Machine)
		}
	}
	return agents, infos, nil
}

// acrossScale is scale: auto for a lab over machines: each machine must
// forward its share of the lab's frames (its placement load over the
// whole) within its capacity, and the lab's one k must suit the machine
// that fits least.
func acrossScale(t *topologies.Topology, pl *placement.Placement, infos []agentapi.Info) (int, string) {
	var total float64
	for _, v := range pl.Load {
		total += v
	}
	k, worst := 1, ""
	for _, in := range infos {
		if total == 0 || in.CapacityPPS <= 0 {
			continue
		}
		need := deploy.FabricPPS(t) * pl.Load[in.Machine] / total
		if km := int(math.Ceil(need / in.CapacityPPS)); km > k || worst == "" {
			k, worst = max(k, km), in.Machine
		}
	}
	k = max(k, deploy.MinAutoScale)
	return k, fmt.Sprintf("auto: the machine that fits least, %s, forwards its share of %.0f frames/s at full load within its capacity at k = %d", worst, deploy.FabricPPS(t), k)
}

// partRequest is what every part of one deploy shares.
type partRequest struct {
	name   string
	t      *topologies.Topology
	pl     *placement.Placement
	under  map[string]netip.Addr
	scale  int
	seed   uint64
	origin time.Time
}

// deployParts records a part per machine, has each agent deploy it and
// returns the lab they make together.
func deployParts(ctx context.Context, o deploy.Options, books *state.Lab, agents []*agentapi.Client, infos []agentapi.Info, r partRequest) (*deploy.Lab, error) {
	t := r.t
	for k, v := range map[string]string{
		"topology": t.Name, "source": t.Source, "runtime": deploy.RuntimeMachines,
		"scale": strconv.Itoa(r.scale), "seed": strconv.FormatUint(r.seed, 10),
	} {
		if err := books.SetInfo(k, v); err != nil {
			return nil, err
		}
	}
	// The lab keeps its topology here too: fault targets resolve on it.
	if err := os.WriteFile(filepath.Join(books.Dir(), deploy.TopologyFile), t.Text(), 0o600); err != nil {
		return nil, fmt.Errorf("keep the topology: %w", err)
	}
	objs := make([]state.Object, len(agents))
	for i, a := range agents {
		objs[i] = state.Object{Kind: state.KindPart, Name: infos[i].Machine, Agent: a.URL()}
	}
	ids, err := books.IntendAll(objs)
	if err != nil {
		return nil, err
	}
	req := agentapi.PartRequest{Topology: t.Text(), Source: t.Source, Placement: r.pl, Underlay: r.under, Scale: r.scale, Seed: r.seed, Origin: r.origin}
	parts := make([]*deploy.Lab, len(agents))
	errs := make([]error, len(agents))
	start := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for i, a := range agents {
		wg.Go(func() {
			var l deploy.Lab
			cctx, cancel := context.WithTimeout(ctx, partTimeout(o))
			defer cancel()
			if err := a.Deploy(cctx, r.name, req, &l); err != nil {
				errs[i] = fmt.Errorf("machine %s: %w", infos[i].Machine, err)
				return
			}
			parts[i] = &l
			mu.Lock()
			done++
			if o.Progress != nil {
				o.Progress(deploy.Event{Step: StepPart, Name: infos[i].Machine, Done: done, Total: len(agents), Elapsed: time.Since(start)})
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// A machine that runs a lab of this name already runs someone
		// else's: the rollback must not destroy it.
		for i, e := range errs {
			if errors.Is(e, agentapi.ErrExists) {
				if ferr := books.Forget(ids[i]); ferr != nil {
					err = errors.Join(err, ferr)
				}
				err = fmt.Errorf("%w (%w)", err, deploy.ErrExists)
			}
		}
		return nil, err
	}
	if err := books.CreatedAll(ids, nil); err != nil {
		return nil, err
	}
	lab := &deploy.Lab{Name: r.name, Topology: t.Name, Source: t.Source, Runtime: deploy.RuntimeMachines, Dir: books.Dir(),
		Scale: r.scale, Seed: r.seed, Created: time.Now().UTC(), Origin: r.origin, Placement: r.pl,
		Timings: []deploy.Timing{{Step: StepPart, Count: len(agents), Elapsed: time.Since(start)}}}
	byName := map[string]deploy.Node{}
	for i, p := range parts {
		m := infos[i].Machine
		for _, w := range p.Waits {
			lab.Waits = append(lab.Waits, "machine "+m+": "+w)
		}
		lab.Machines = append(lab.Machines, deploy.MachineRef{Name: m, Agent: agents[i].URL(), Underlay: infos[i].Underlay, Nodes: len(p.Nodes)})
		for _, n := range p.Nodes {
			n.Machine = m
			// The process runs on that machine: its agent answers for it.
			n.PID, n.StartTime = 0, 0
			if n.Socket != "" {
				n.Socket = agents[i].NodeURL(r.name, n.Name)
			}
			byName[n.Name] = n
		}
	}
	for _, n := range t.Nodes {
		if nd, ok := byName[n.Name]; ok {
			lab.Nodes = append(lab.Nodes, nd)
		}
	}
	return lab, nil
}

// partTimeout bounds one agent's deploy: the health timeout of its nodes
// and room for the rest.
func partTimeout(o deploy.Options) time.Duration {
	h := o.HealthTimeout
	if h <= 0 {
		h = 30 * time.Second
	}
	return h + 5*time.Minute
}

// removeParts asks the agent of every part l records to destroy it, in
// parallel, and forgets the parts that are gone. An agent that does not
// answer keeps its part recorded, and the error says which.
func removeParts(ctx context.Context, l *state.Lab) error {
	parts, errs := eachPart(ctx, l, 2*time.Minute, func(ctx context.Context, a *agentapi.Client) error {
		var rep json.RawMessage
		return a.Destroy(ctx, l.Name(), &rep)
	})
	var gone []int
	for i, o := range parts {
		if errs[i] == nil {
			gone = append(gone, o.ID)
		}
	}
	return errors.Join(append(errs, l.ForgetAll(gone))...)
}

// eachPart calls call with the agent of every part l records, in
// parallel, each within timeout, and returns the parts and, by part, what
// went wrong (named by its machine).
func eachPart(ctx context.Context, l *state.Lab, timeout time.Duration, call func(context.Context, *agentapi.Client) error) ([]state.Object, []error) {
	var parts []state.Object
	for _, o := range l.Objects() {
		if o.Kind == state.KindPart {
			parts = append(parts, o)
		}
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, o := range parts {
		wg.Go(func() {
			a := agentapi.NewClient(o.Agent)
			defer a.Close()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if err := call(cctx, a); err != nil {
				errs[i] = fmt.Errorf("machine %s: %w", o.Name, err)
			}
		})
	}
	wg.Wait()
	return parts, errs
}

// agentOf returns the agent of the machine that runs node n of l, a lab
// that spans machines.
func agentOf(l *deploy.Lab, n *deploy.Node) (*agentapi.Client, error) {
	for _, m := range l.Machines {
		if m.Name == n.Machine {
			return agentapi.NewClient(m.Agent), nil
		}
	}
	return nil, fmt.Errorf("node %s: lab %s names no agent for its machine %q", n.Name, l.Name, n.Machine)
}

// restartAcross restarts node n of l through its machine's agent.
func restartAcross(ctx context.Context, l *deploy.Lab, n *deploy.Node) (*deploy.Node, error) {
	a, err := agentOf(l, n)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var out deploy.Node
	if err := a.Restart(ctx, l.Name, n.Name, &out); err != nil {
		return nil, fmt.Errorf("restart %s on machine %s: %w", n.Name, n.Machine, err)
	}
	r := *n // the coordinator's view: reached through the agent
	r.Health = out.Health
	return &r, nil
}

// repairAcross has every machine's agent restart the dead nodes of its
// part of l, and deploys again the part of a machine that has none any
// more (it rebooted: its namespaces and run directory went with it).
func repairAcross(ctx context.Context, l *deploy.Lab) ([]string, error) {
	var (
		mu    sync.Mutex
		fixed []string
		errs  []error
		wg    sync.WaitGroup
	)
	for _, m := range l.Machines {
		wg.Go(func() {
			a := agentapi.NewClient(m.Agent)
			defer a.Close()
			r, err := a.Repair(ctx, l.Name)
			if errors.Is(err, agentapi.ErrNoPart) {
				r.Restarted, err = redeployPart(ctx, l, a, m)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("machine %s: %w", m.Name, err))
			}
			fixed = append(fixed, r.Restarted...)
		})
	}
	wg.Wait()
	slices.Sort(fixed)
	return fixed, errors.Join(errs...)
}

// Adopt records l, a lab that spans machines which was deployed elsewhere
// (by a Kubernetes controller, package kube), under root: its parts in
// books of its own, its topology file's text, and its deploy.Lab, so that this
// machine's commands reach its nodes through their agents and destroy
// removes its parts. A lab already recorded is left as it is.
func Adopt(root string, l *deploy.Lab, topology []byte) error {
	if l.Runtime != deploy.RuntimeMachines || len(l.Machines) == 0 {
		return fmt.Errorf("adopt %s: not a lab that spans machines", l.Name)
	}
	if _, err := deploy.Deployed(root, l.Name); err == nil {
		return nil
	}
	books, err := state.Open(state.RootOr(root), l.Name, false)
	if err != nil {
		return fmt.Errorf("adopt %s: %w", l.Name, err)
	}
	if len(books.Objects()) == 0 {
		for k, v := range map[string]string{"topology": l.Topology, "source": l.Source, "runtime": deploy.RuntimeMachines,
			"scale": strconv.Itoa(l.Scale), "seed": strconv.FormatUint(l.Seed, 10)} {
			if err := books.SetInfo(k, v); err != nil {
				books.Close()
				return fmt.Errorf("adopt %s: %w", l.Name, err)
			}
		}
		objs := make([]state.Object, len(l.Machines))
		for i, m := range l.Machines {
			objs[i] = state.Object{Kind: state.KindPart, Name: m.Name, Agent: m.Agent}
		}
		ids, err := books.IntendAll(objs)
		if err == nil {
			err = books.CreatedAll(ids, nil)
		}
		if err != nil {
			books.Close()
			return fmt.Errorf("adopt %s: %w", l.Name, err)
		}
	}
	if topology != nil {
		if err := os.WriteFile(filepath.Join(books.Dir(), deploy.TopologyFile), topology, 0o600); err != nil {
			books.Close()
			return fmt.Errorf("adopt %s: keep the topology: %w", l.Name, err)
		}
	}
	c := *l
	c.Dir = books.Dir()
	if err := deploy.WriteRecord(&c); err != nil {
		books.Close()
		return fmt.Errorf("adopt %s: %w", l.Name, err)
	}
	return books.Close()
}

// execAcross runs argv in node n of l through its machine's agent. The
// command gets no standard input; its output is written when it ends.
func execAcross(ctx context.Context, l *deploy.Lab, n *deploy.Node, argv []string, stdio sandbox.Stdio) (int, error) {
	if stdio.In != nil {
		if f, ok := stdio.In.(*os.File); !ok || f != os.Stdin {
			return -1, fmt.Errorf("exec %s: a command on another machine gets no standard input", n.Name)
		}
	}
	a, err := agentOf(l, n)
	if err != nil {
		return -1, err
	}
	defer a.Close()
	r, err := a.Exec(ctx, l.Name, n.Name, agentapi.ExecRequest{Argv: argv, Env: stdio.Env})
	if err != nil {
		return -1, fmt.Errorf("exec in %s on machine %s: %w", n.Name, n.Machine, err)
	}
	for _, o := range []struct {
		w io.Writer
		b []byte
	}{{stdio.Out, r.Stdout}, {stdio.Err, r.Stderr}} {
		if o.w != nil {
			o.w.Write(o.b)
		}
	}
	return r.Exit, nil
}

// captureAcross records port of node n of l through its machine's agent
// into o.File.
func captureAcross(ctx context.Context, l *deploy.Lab, n *deploy.Node, port string, o deploy.CaptureOptions) (deploy.CaptureResult, error) {
	res := deploy.CaptureResult{Node: n.Name, Port: port, File: o.File}
	if o.Frames <= 0 && o.Duration <= 0 {
		return res, fmt.Errorf("capture %s:%s: the node runs on machine %s: give -c N or --wall-duration, the capture comes back when it ends", n.Name, port, n.Machine)
	}
	a, err := agentOf(l, n)
	if err != nil {
		return res, err
	}
	defer a.Close()
	f, err := os.Create(o.File)
	if err != nil {
		return res, fmt.Errorf("capture: %w", err)
	}
	res.Frames, err = a.Capture(ctx, l.Name, n.Name, agentapi.CaptureRequest{Port: port, Frames: o.Frames, Dir: o.Dir, Duration: o.Duration}, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(o.File)
		return res, fmt.Errorf("capture %s:%s on machine %s: %w", n.Name, port, n.Machine, err)
	}
	return res, nil
}

// redeployPart has agent a deploy machine m's part of l again, as it was
// (the same placement, k, seed and origin), and returns its nodes.
func redeployPart(ctx context.Context, l *deploy.Lab, a *agentapi.Client, m deploy.MachineRef) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(l.Dir, deploy.TopologyFile))
	if err != nil {
		return nil, fmt.Errorf("deploy the part again: %w", err)
	}
	under := map[string]netip.Addr{}
	for _, mm := range l.Machines {
		under[mm.Name] = mm.Underlay
	}
	req := agentapi.PartRequest{Topology: text, Source: l.Source, Placement: l.Placement, Underlay: under, Scale: l.Scale, Seed: l.Seed, Origin: l.Origin}
	var part deploy.Lab
	cctx, cancel := context.WithTimeout(ctx, partTimeout(deploy.Options{}))
	defer cancel()
	if err := a.Deploy(cctx, l.Name, req, &part); err != nil {
		return nil, fmt.Errorf("deploy the part again: %w", err)
	}
	var nodes []string
	for _, n := range part.Nodes {
		nodes = append(nodes, n.Name)
	}
	return nodes, nil
}
