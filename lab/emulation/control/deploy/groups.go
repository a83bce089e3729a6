package deploy

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// unit is what one node process runs: one node, or a group of nodes
// whose models share one loop (Options.NodeGroups, node.Group).
type unit struct {
	name  string      // the node's name, or the group's
	group string      // "" for a node of its own
	procs []*nodeProc // the members, in node order
}

// units returns the processes procs run in: with NodeGroups, that many
// groups (groupNodes); without, one each.
func (d *deployer) units(procs []*nodeProc) []unit {
	if d.opts.NodeGroups <= 0 || len(procs) == 0 {
		var out []unit
		for _, p := range procs {
			out = append(out, unit{name: p.node.Name, procs: []*nodeProc{p}})
		}
		return out
	}
	members := groupNodes(procs, d.opts.NodeGroups)
	groups := make([]unit, len(members))
	for i := range groups {
		groups[i].procs = members[i]
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

// groupNodes deals procs into n groups (fewer if there are fewer
// nodes), balanced by port counts (the frames a node forwards grow with
// its ports) and keeping each rack together: a rack's hosts and its rack
// switch (nodes of one zone and rack) go to one group, so that the links
// between them stay inside a loop, in memory (emu.Options.InLoopLinks),
// and only the rack's uplinks and front-end links cross between groups.
// Racks and the nodes of no rack are dealt largest first, each to the
// group with the fewest ports so far.
func groupNodes(procs []*nodeProc, n int) [][]*nodeProc {
	var blocks [][]*nodeProc
	for _, idx := range byNode(len(procs), func(i int) string {
		if n := procs[i].node; n.Rack != 0 {
			return fmt.Sprintf("rack %d/%d", n.Zone, n.Rack)
		}
		return "node " + procs[i].node.Name
	}) {
		var b []*nodeProc
		for _, i := range idx {
			b = append(b, procs[i])
		}
		blocks = append(blocks, b)
	}
	ports := func(b []*nodeProc) (s int) {
		for _, p := range b {
			s += len(p.cfg.Ports)
		}
		return s
	}
	slices.SortStableFunc(blocks, func(a, b []*nodeProc) int { return cmp.Compare(ports(b), ports(a)) })
	groups := make([][]*nodeProc, min(n, len(procs)))
	load := make([]int, len(groups))
	for _, b := range blocks {
		g := slices.Index(load, slices.Min(load))
		groups[g] = append(groups[g], b...)
		load[g] += ports(b)
	}
	return slices.DeleteFunc(groups, func(g []*nodeProc) bool { return len(g) == 0 })
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

// byNode groups the indexes 0..n-1 by key(i), in order of first
// appearance, each group in index order.
func byNode(n int, key func(i int) string) [][]int {
	at := map[string]int{}
	var groups [][]int
	for i := range n {
		k := key(i)
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
