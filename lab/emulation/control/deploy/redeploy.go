package deploy

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/topologies"
)

// ErrNotRedeployable is returned by Again for a lab rocelab cannot deploy
// again from its own books (one that spans machines, or Kubernetes').
var ErrNotRedeployable = errors.New("cannot be deployed again from its books")

// Again returns what deploys lab again as it is — its topology as
// deployed (the copy in its run directory), its scale factor and seed, its
// node groups, and its nodes' exact and socket links — and its runtime's
// name ("netns" or "docker"), for `rocelab redeploy`: destroy it, then
// deploy these. Progress, Runtime and Binary are the caller's to set.
func Again(root, lab string) (Options, string, error) {
	l, err := Deployed(root, lab)
	if err != nil {
		return Options{}, "", err
	}
	if l.Runtime == RuntimeMachines || len(l.Machines) > 0 || l.Kubernetes != "" {
		return Options{}, "", fmt.Errorf("lab %s spans machines: %w; destroy it and deploy it again with --agents", lab, ErrNotRedeployable)
	}
	t, err := Topology(l)
	if err != nil {
		return Options{}, "", err
	}
	o := Options{Topology: t, LabName: l.Name, Root: root, Scale: l.Scale, Seed: l.Seed}
	groups := map[string]bool{}
	for _, n := range l.Nodes {
		if n.Group != "" {
			groups[n.Group] = true
		}
		if n.Config != "" && n.Kind == topologies.KindSwitch {
			if c, err := node.Load(n.Config); err == nil {
				o.ExactLinks, o.SocketLinks = c.ExactLinks, c.SocketLinks
			}
		}
	}
	o.NodeGroups = len(groups)
	return o, l.Runtime, nil
}
