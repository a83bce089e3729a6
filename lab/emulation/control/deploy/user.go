package deploy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/topologies"
)

// ErrNeedsDocker is returned (wrapped) by Deploy for a topology that names
// container images when the runtime is not docker.
var ErrNeedsDocker = errors.New("container images need the docker runtime")

// where is FILE:LINE:COL of what node n's container was written at.
func where(t *topologies.Topology, n *topologies.Node) string {
	p := n.Container.Pos
	if p.IsZero() {
		return t.Source
	}
	return fmt.Sprintf("%s:%d:%d", t.Source, p.Line, p.Col)
}

// checkRuntimeFits refuses a topology whose nodes name images of their own
// with any runtime but docker: the netns runtime has no images to run, and
// running the node without the user's software would be a lab that only
// looks right.
func checkRuntimeFits(t *topologies.Topology, rt sandbox.Runtime) error {
	if _, ok := rt.(sandbox.Images); ok {
		return nil
	}
	imgs := t.Images()
	if len(imgs) == 0 {
		return nil
	}
	first := slices.MinFunc(slices.Collect(maps.Values(imgs)), func(a, b *topologies.Node) int { return cmp.Compare(a.Index, b.Index) })
	return fmt.Errorf("%s: node %s runs in image %s: %w, not --runtime %s (use --runtime docker, or leave --runtime out)",
		where(t, first), first.Name, first.Container.Image, ErrNeedsDocker, rt.Name())
}

// checkUserImages checks, before anything is created, that every image the
// topology names is present on the machine (nothing is pulled) and that
// every bind's host path exists (the engine would create a missing one as
// an empty directory, on the host). Each problem names where it was
// written.
func checkUserImages(ctx context.Context, rt sandbox.Images, t *topologies.Topology) error {
	imgs := t.Images()
	var errs []error
	for _, img := range slices.Sorted(maps.Keys(imgs)) {
		n := imgs[img]
		if err := rt.HasImage(ctx, img); err != nil {
			errs = append(errs, fmt.Errorf("%s: node %s: %w", where(t, n), n.Name, err))
		}
	}
	errs = append(errs, checkBindSources(t))
	return errors.Join(errs...)
}

// checkBindSources checks that the host path of every bind exists (the
// engine would create a missing one as an empty directory, on the host),
// naming where each missing one was written.
func checkBindSources(t *topologies.Topology) error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range t.Nodes {
		if n.Container == nil {
			continue
		}
		for i, b := range n.Container.Binds {
			src, _, _ := strings.Cut(b, ":")
			if seen[src] {
				continue
			}
			seen[src] = true
			if _, err := os.Stat(src); err != nil {
				at := t.Source
				if i < len(n.Container.BindPos) && !n.Container.BindPos[i].IsZero() {
					p := n.Container.BindPos[i]
					at = fmt.Sprintf("%s:%d:%d", t.Source, p.Line, p.Col)
				}
				errs = append(errs, fmt.Errorf("%s: node %s: bind source %s: %w", at, n.Name, src, err))
			}
		}
	}
	return errors.Join(errs...)
}

// checkUserContainers fails the deploy if a user container stopped since
// it was started (its command ended or failed), with its output.
func (d *deployer) checkUserContainers(ctx context.Context) error {
	if _, ok := d.rt.(sandbox.Observer); !ok {
		return nil
	}
	var errs []error
	for _, n := range d.t.Nodes {
		c, ok := d.containers[n.Name]
		if n.Container == nil || !ok {
			continue
		}
		if err := d.userStopped(ctx, n, c.Ref); err != nil {
			errs = append(errs, fmt.Errorf("node %s %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// userStopped says how node n's user container ref ended, with its
// output, or returns nil while it runs.
func (d *deployer) userStopped(ctx context.Context, n *topologies.Node, ref sandbox.Ref) error {
	rt, ok := d.rt.(sandbox.Observer)
	if !ok {
		return nil
	}
	if err := rt.Running(ctx, ref); err != nil {
		return fmt.Errorf("(image %s): %w: its command must keep running (set cmd: in the topology)%s",
			n.Container.Image, err, d.logOf(n.Name, ref.ID))
	}
	return nil
}

// userHealth checks the containers of l's nodes that run the user's
// images: a stopped user container or sidecar is the node's health.
func userHealth(ctx context.Context, l *Lab) {
	var nodes []*Node
	for i := range l.Nodes {
		if l.Nodes[i].Image != "" {
			nodes = append(nodes, &l.Nodes[i])
		}
	}
	if len(nodes) == 0 {
		return
	}
	opened, release, err := openRuntime(l.Runtime)
	if err != nil {
		for _, n := range nodes {
			n.Health = err.Error()
		}
		return
	}
	defer release()
	rt, ok := opened.(sandbox.Observer)
	if !ok {
		return
	}
	for _, n := range nodes {
		var probs []string
		for _, c := range []struct{ what, name string }{{"container", n.Container}, {"endpoint sidecar", n.Sidecar}} {
			if c.name == "" {
				continue
			}
			ref := sandbox.Ref{Runtime: l.Runtime, Lab: l.Name, Node: n.Name, ID: c.name}
			if err := rt.Running(ctx, ref); err != nil {
				probs = append(probs, c.what+": "+err.Error())
			}
		}
		switch {
		case len(probs) > 0:
			n.Health = strings.Join(probs, "; ")
		case n.Health == "-" || n.Health == "":
			n.Health = "ok" // no process: the user container is the node
		}
	}
}

// runsProcess reports whether node n runs a node process: switches run
// the switch model, hosts and storage with back-end NICs the endpoint
// (processFor decides; this is its short form for the docker runtime).
func runsProcess(n *topologies.Node) bool {
	if n.Kind == topologies.KindSwitch {
		return true
	}
	for _, p := range n.Ports {
		if p.Plane == topologies.BE {
			return true
		}
	}
	return false
}

// userContainer is node n's own container: its image, command,
// environment and binds, its name as hostname, and an /etc/hosts entry
// for every host and storage node of the lab (name → its first FE
// address, IPv4 and IPv6), so that `ping st1` works without DNS.
func (d *deployer) userContainer(n *topologies.Node) *sandbox.UserContainer {
	c := n.Container
	u := &sandbox.UserContainer{Image: c.Image, Cmd: c.Cmd, Env: c.Env, Binds: c.Binds, Hostname: n.Name}
	if slices.ContainsFunc(n.Ports, func(p *topologies.Port) bool { return p.Plane == topologies.BE }) {
		// Verbs programs in the container reach the node's NICs through
		// the lab's verbs directory (socket and library).
		u.Binds = append(slices.Clone(u.Binds), d.verbsBind())
	}
	for _, m := range d.t.Nodes {
		if m.Kind == topologies.KindSwitch {
			continue
		}
		for _, p := range m.Ports {
			if p.Plane != topologies.FE || !p.Addr.IsValid() {
				continue
			}
			u.Hosts = append(u.Hosts, m.Name+":"+p.Addr.Addr().String())
			if p.Addr6.IsValid() {
				u.Hosts = append(u.Hosts, m.Name+":"+p.Addr6.Addr().String())
			}
			break
		}
	}
	return u
}
