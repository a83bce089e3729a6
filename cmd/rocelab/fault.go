package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// faultRow is one fault of a lab, as fault add and list print it.
type faultRow struct {
	// ID is unique in the lab: node/fN.
	ID      string           `json:"id"`
	Node    string           `json:"node"`
	Spec    string           `json:"spec"`
	Targets []string         `json:"targets"`
	Packets map[string]int64 `json:"packets"`
}

// deadRow is a node fault list could not ask.
type deadRow struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

func newFaultCmd(opts *options) *cobra.Command {
	var name, root string
	cmd := &cobra.Command{
		Use:   "fault add|list|clear",
		Short: "Put faults on a running lab's links and take them off (loss, delay, storm, …)",
		Long: `fault changes a deployed lab's faults live. A fault sits on the egress of a
node's port, between the model and the wire, and takes effect within a
millisecond of wall clock. IDs are node/fN, unique in the lab. Clearing
a fault restores the exact previous behaviour. Needs root.

Targets, in the grammar scenario files use too (docs/scenarios.md), resolved
against the lab's topology as deployed; the word forms need no quoting in
a shell ('a->b' must be quoted, or the shell reads > as a redirection):
  node:port   the egress of that port (host3:gpu0, sw1:p3)
  node        every port of the node
  a to b      the link direction from a to b: every port of a cabled to b
              (all parallel links); a and b are node or node:port; same
              as 'a->b'
  a and b     both directions of every link between a and b; same as
              'a<->b' and 'a--b'

  rocelab fault add rtsw1 to ctsw1 loss 1%
  rocelab fault add host1:gpu0 delay 50us jitter 5us

Kinds and parameters are those of scenario files (docs/scenarios.md):
  loss 1% [burst 4] · delay 50us [jitter 5us] · corrupt 0.1% · reorder 1%
  duplicate 1% · rate 100G · down · flap period 1ms down 100us · ecn-off
  pfc-off 3 · dscp-map 26:0 · storm [prio 3] [interval 10us]
  elephant dst IP [rate R] · incast dst IP burst 1MB period 100us`,
	}
	cmd.PersistentFlags().StringVar(&name, "name", "", "lab name (default: the only lab that has the node)")
	cmd.PersistentFlags().StringVar(&root, "root", state.DefaultRoot, "run directory root")
	cmd.PersistentFlags().MarkHidden("root")

	add := &cobra.Command{
		Use:   "add TARGET KIND [params…]",
		Short: "Add a fault on a port's egress, a node's ports or a link direction",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest := faultTargetArgs(args)
			if len(rest) == 0 {
				return badInput(fmt.Errorf("fault add %s: no fault kind given", target))
			}
			spec, err := faults.ParseSpec(strings.Join(rest, " "))
			if err != nil {
				return badInput(err)
			}
			if err := requireRoot("fault"); err != nil {
				return err
			}
			ctx := cmdContext(cmd)
			places, err := resolveFaultTarget(root, name, target)
			if err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return deploy.Explain(ctx, root, name, err)
			}
			var rows []faultRow
			for _, pl := range places {
				c := nodeapi.NewClient(pl.socket)
				fi, err := c.AddFault(ctx, pl.port, spec)
				c.Close()
				if err != nil {
					return deploy.Explain(ctx, root, name, fmt.Errorf("%s on %s: %w", target, pl.node, err))
				}
				rows = append(rows, toRow(pl.node, fi))
			}
			if opts.wantJSON() {
				if len(rows) == 1 {
					return opts.printJSON(rows[0])
				}
				return opts.printJSON(rows)
			}
			for _, row := range rows {
				fmt.Fprintf(opts.stdout, "%s\t%s on %s\n", row.ID, row.Spec, strings.Join(row.Targets, ", "))
			}
			return nil
		},
	}
	// A negative number among the fault's words (loss -1%) reaches cobra as
	// a shorthand flag: say what it is instead of "unknown shorthand flag".
	add.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// pflag says: unknown shorthand flag: '1' in -1%
		if _, word, ok := strings.Cut(err.Error(), " in -"); ok && word != "" && (word[0] >= '0' && word[0] <= '9' || word[0] == '.') {
			return badInput(fmt.Errorf("fault add: -%s: fault parameters are not negative (loss and the other probabilities take 0%%..100%%; times and rates are positive)", word))
		}
		return badInput(err)
	})
	list := &cobra.Command{
		Use:   "list",
		Short: "List the faults of a lab",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("fault"); err != nil {
				return err
			}
			rows, dead, err := labFaults(cmdContext(cmd), root, name)
			if err != nil {
				return err
			}
			var deadErr error
			if len(dead) > 0 {
				deadErr = fmt.Errorf("%d node(s) did not answer: %w", len(dead), deploy.ErrNodeDead)
			}
			if opts.wantJSON() {
				if len(dead) > 0 {
					if err := opts.printJSON(struct {
						Faults []faultRow `json:"faults"`
						Dead   []deadRow  `json:"dead"`
					}{rows, dead}); err != nil {
						return err
					}
					return deadErr
				}
				return opts.printJSON(rows)
			}
			for _, d := range dead {
				fmt.Fprintf(opts.stdout, "%s: DEAD (%s): its faults are unknown; rocelab restart %s brings it back\n", d.Node, d.Reason, d.Node)
			}
			tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSPEC\tTARGETS\tPACKETS")
			for _, r := range rows {
				var pk []string
				for _, k := range sortedMapKeys(r.Packets) {
					pk = append(pk, fmt.Sprintf("%s=%d", k, r.Packets[k]))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Spec, strings.Join(r.Targets, ","), strings.Join(pk, " "))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return deadErr
		},
	}
	var all bool
	clear := &cobra.Command{
		Use:   "clear [ID|--all]",
		Short: "Remove one fault (node/fN) or every fault of the lab",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return badInput(errors.New("give one fault ID (node/fN) or --all"))
			}
			if err := requireRoot("fault"); err != nil {
				return err
			}
			ctx := cmdContext(cmd)
			if all {
				n, err := clearLab(ctx, root, name)
				if err != nil {
					return err
				}
				fmt.Fprintf(opts.stdout, "cleared %d faults\n", n)
				return nil
			}
			nodeName, id, ok := strings.Cut(args[0], "/")
			if !ok || nodeName == "" {
				return badInput(fmt.Errorf("fault ID %q: want node/fN", args[0]))
			}
			if _, err := faults.ParseID(id); err != nil {
				return badInput(err)
			}
			_, n, err := deploy.FindNode(root, name, nodeName)
			if err != nil {
				return badInputIf(err)
			}
			c := nodeapi.NewClient(n.Socket)
			defer c.Close()
			fi, err := c.RemoveFault(ctx, id)
			var ae *nodeapi.APIError
			if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				have := "none"
				if list, lerr := c.Faults(ctx); lerr == nil && len(list) > 0 {
					var ids []string
					for _, f := range list {
						ids = append(ids, nodeName+"/"+f.ID)
					}
					have = strings.Join(ids, ", ")
				}
				return badInput(fmt.Errorf("no fault %s/%s (%s has: %s; rocelab fault list shows them all)", nodeName, id, nodeName, have))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(opts.stdout, "cleared %s/%s (%s)\n", nodeName, fi.ID, fi.Spec)
			return nil
		},
	}
	clear.Flags().BoolVar(&all, "all", false, "remove every fault of the lab")
	cmd.AddCommand(add, list, clear)
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// badInputIf marks the errors of picking a lab or node (one not deployed,
// or several to choose from) as bad input: exit 2, as everywhere.
func badInputIf(err error) error {
	if errors.Is(err, deploy.ErrNoNode) || errors.Is(err, deploy.ErrPickLab) || errors.Is(err, deploy.ErrNoLab) || errors.Is(err, deploy.ErrNoPort) {
		return badInput(err)
	}
	return err
}

func toRow(nodeName string, fi nodeapi.FaultInfo) faultRow {
	return faultRow{ID: nodeName + "/" + fi.ID, Node: nodeName, Spec: fi.Spec, Targets: fi.Targets, Packets: fi.Packets}
}

func sortedMapKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// faultPlace is one node's port argument for its fault API (an ifname, or
// "all") and the node's API socket, from the books of the lab the target
// was resolved in.
type faultPlace struct{ node, port, socket string }

// faultTargetArgs splits fault add's arguments into the target and the
// fault: "A to B" and "A and B" take three words.
func faultTargetArgs(args []string) (target string, rest []string) {
	if len(args) >= 3 && (args[1] == "to" || args[1] == "and") {
		return strings.Join(args[:3], " "), args[3:]
	}
	return args[0], args[1:]
}

// resolveFaultTarget turns TARGET into the places its faults go, by the
// one target grammar (topologies.ResolveTarget) over the lab's topology as
// deployed: a whole node → "all" of its ports; a port or link → the
// ifname of each egress port, from the lab's books.
func resolveFaultTarget(root, lab, target string) ([]faultPlace, error) {
	l, err := deploy.TargetLab(root, lab, firstTargetNode(target))
	if err != nil {
		return nil, badInputIf(err)
	}
	t, err := deploy.Topology(l)
	if err != nil {
		return nil, err
	}
	tg, err := t.ResolveTarget(target)
	if err != nil {
		return nil, badInput(fmt.Errorf("target %q: %w", target, err))
	}
	books := map[string]*deploy.Node{}
	for i := range l.Nodes {
		books[l.Nodes[i].Name] = &l.Nodes[i]
	}
	noProcess := func(name string) error {
		return badInput(fmt.Errorf("target %q: %s runs no node process (no faults on it)", target, name))
	}
	if tg.Node != nil {
		if n := books[tg.Node.Name]; n == nil || n.Socket == "" {
			return nil, noProcess(tg.Node.Name)
		}
		return []faultPlace{{tg.Node.Name, "all", books[tg.Node.Name].Socket}}, nil
	}
	var out []faultPlace
	for _, d := range tg.Directions {
		n := books[d.From.Node.Name]
		if n == nil || n.Socket == "" {
			return nil, noProcess(d.From.Node.Name)
		}
		ifname := d.From.IfName
		for _, itf := range n.Interfaces {
			if p, name, _ := strings.Cut(itf, "="); p == d.From.Name {
				ifname = name
			}
		}
		out = append(out, faultPlace{n.Name, ifname, n.Socket})
	}
	return out, nil
}

// firstTargetNode returns the node a target starts with, to find its lab.
func firstTargetNode(target string) string {
	s := strings.TrimSpace(target)
	end := len(s)
	for _, sep := range []string{":", " ", "<->", "->", "--"} {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// labNodes returns the node-process nodes of the one lab named (or the
// only lab).
func labNodes(ctx context.Context, root, lab string) ([]deploy.Node, error) {
	l, err := deploy.OnlyLab(ctx, root, lab)
	if err != nil {
		return nil, badInputIf(err)
	}
	var out []deploy.Node
	for _, n := range l.Nodes {
		if n.Socket != "" {
			out = append(out, n)
		}
	}
	return out, nil
}

// labFaults lists every node's faults; the nodes that do not answer are
// in dead.
func labFaults(ctx context.Context, root, lab string) ([]faultRow, []deadRow, error) {
	nodes, err := labNodes(ctx, root, lab)
	if err != nil {
		return nil, nil, err
	}
	rows := []faultRow{}
	var dead []deadRow
	for _, n := range nodes {
		if !n.Alive() || n.Health == "-" {
			dead = append(dead, deadRow{n.Name, n.Health})
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		list, err := c.Faults(ctx)
		c.Close()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			dead = append(dead, deadRow{n.Name, err.Error()})
			continue
		}
		for _, fi := range list {
			rows = append(rows, toRow(n.Name, fi))
		}
	}
	return rows, dead, nil
}

// clearLab removes every fault of every node.
func clearLab(ctx context.Context, root, lab string) (int, error) {
	nodes, err := labNodes(ctx, root, lab)
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, n := range nodes {
		if !n.Alive() || n.Health == "-" {
			errs = append(errs, fmt.Errorf("%s: %s: %w", n.Name, n.Health, deploy.ErrNodeDead))
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		k, err := c.ClearFaults(ctx)
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
		total += k
	}
	return total, errors.Join(errs...)
}
