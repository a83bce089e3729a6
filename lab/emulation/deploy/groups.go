package deploy

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/lab/emulation/state"
)

// unit is what one node process runs: one node, or a group of nodes
// whose models share one loop (Options.NodeGroups, node.Group).
type unit struct {
	name  string      // the node's name, or the group's
	group string      // "" for a node of its own
	procs []*nodeProc // the members, in node order
}

// units returns the processes procs run in: with NodeGroups, that many
// groups (fewer if there are fewer nodes), balanced by port counts (the
// frames a node forwards grow with its ports); without, one each.
func (d *deployer) units(procs []*nodeProc) []unit {
	if d.opts.NodeGroups <= 0 || len(procs) == 0 {
		var out []unit
		for _, p := range procs {
			out = append(out, unit{name: p.node.Name, procs: []*nodeProc{p}})
		}
		return out
	}
	groups := make([]unit, min(d.opts.NodeGroups, len(procs)))
	load := make([]int, len(groups))
	// Largest first, each to the group with the fewest ports so far.
	bySize := slices.Clone(procs)
	slices.SortStableFunc(bySize, func(a, b *nodeProc) int { return cmp.Compare(len(b.cfg.Ports), len(a.cfg.Ports)) })
	for _, p := range bySize {
		g := slices.Index(load, slices.Min(load))
		groups[g].procs = append(groups[g].procs, p)
		load[g] += len(p.cfg.Ports)
	}
	order := map[*nodeProc]int{}
	for i, p := range procs {
		order[p] = i
	}
	for i := range groups {
		g := &groups[i]
		g.name = "group" + strconv.Itoa(i+1)
		g.group = g.name
		slices.SortFunc(g.procs, func(a, b *nodeProc) int { return cmp.Compare(order[a], order[b]) })
		for _, p := range g.procs {
			p.group = g
		}
	}
	return groups
}

// procNSLocked is the namespace p's process runs in: its node's, or for
// a group the first member's (the others' ports are opened in theirs).
// d.mu must be held.
func (d *deployer) procNSLocked(p *nodeProc) string {
	if p.group != nil {
		return d.ns[p.group.procs[0].node.Name]
	}
	return d.ns[p.node.Name]
}

// startUnit starts u's process: start for a node of its own; for a
// group, every member's config (with its namespace, where the group
// opens its ports) and one process, in the first member's namespace,
// that runs them all.
func (d *deployer) startUnit(u unit) error {
	if u.group == "" {
		return d.start(u.procs[0])
	}
	var paths []string
	d.mu.Lock()
	ns := d.procNSLocked(u.procs[0])
	d.mu.Unlock()
	for _, p := range u.procs {
		d.mu.Lock()
		p.cfg.NetNS = d.ns[p.node.Name]
		d.mu.Unlock()
		path := d.path(p.node.Name, ".json")
		if err := p.cfg.Write(path); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	logPath := d.path(u.name, groupLogExt)
	pr, ready, err := startNode(d.binary, paths, ns, state.Dir(d.root, d.name), logPath, "")
	if err != nil {
		return fmt.Errorf("group %s: %w", u.name, err)
	}
	for i, p := range u.procs {
		p.started, p.ready = pr, ready
		nd := d.nodes[p.node.Name]
		nd.PID, nd.StartTime, nd.Group = pr.PID, pr.StartTime, u.name
		nd.Socket, nd.Config, nd.Log = p.cfg.Socket, paths[i], logPath
	}
	return nil
}

// groupLogExt ends the name of a group process's log in the run directory.
const groupLogExt = ".group.log"

func unitNames(us []unit) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.name)
	}
	return out
}
