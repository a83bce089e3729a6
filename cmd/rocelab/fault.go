package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/jobs"
)

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
		Example: `  rocelab fault add rtsw2 to host4 loss 1%
  rocelab fault list
  rocelab fault clear --all`,
	}
	cmd.PersistentFlags().StringVar(&name, "name", "", "lab name (default: the only lab that has the node)")
	cmd.PersistentFlags().StringVar(&root, "root", state.DefaultRoot, "run directory root")
	cmd.PersistentFlags().MarkHidden("root")

	add := &cobra.Command{
		Use:   "add TARGET KIND [params…]",
		Short: "Add a fault on a port's egress, a node's ports or a link direction",
		Example: `  rocelab fault add rtsw2 to host4 loss 1%
  rocelab fault add host1:gpu0 delay 50us jitter 5us
  rocelab fault add 'rtsw1->ctsw1' down
  rocelab fault add rtsw1 and ctsw1 flap period 1ms down 100us --name laptop`,
		Args: cobra.MinimumNArgs(2),
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
			l := &jobs.Lab{Root: root, Name: name}
			defer l.Close()
			rows, err := l.Faults().Add(ctx, target, spec)
			if err != nil {
				if jobs.IsInput(err) {
					return inputErr(err)
				}
				return l.Explain(ctx, err)
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
		Example: `  rocelab fault list
  rocelab fault list --name laptop -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("fault"); err != nil {
				return err
			}
			l := &jobs.Lab{Root: root, Name: name}
			defer l.Close()
			rows, dead, err := l.Faults().ListAll(cmdContext(cmd))
			if err != nil {
				return inputErr(err)
			}
			var deadErr error
			if len(dead) > 0 {
				deadErr = fmt.Errorf("%d node(s) did not answer: %w", len(dead), deploy.ErrNodeDead)
			}
			if opts.wantJSON() {
				if len(dead) > 0 {
					if err := opts.printJSON(struct {
						Faults []faults.Placed `json:"faults"`
						Dead   []jobs.Dead     `json:"dead"`
					}{rows, dead}); err != nil {
						return err
					}
					return deadErr
				}
				return opts.printJSON(rows)
			}
			for _, d := range dead {
				if why, ok := strings.CutPrefix(d.Reason, deploy.HealthUnreachable); ok {
					fmt.Fprintf(opts.stdout, "%s: UNREACHABLE: its faults are unknown: %s\n", d.Node, why)
					continue
				}
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
		Example: `  rocelab fault clear rtsw2/f1
  rocelab fault clear --all --name laptop`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return badInput(errors.New("give one fault ID (node/fN) or --all"))
			}
			if err := requireRoot("fault"); err != nil {
				return err
			}
			ctx := cmdContext(cmd)
			l := &jobs.Lab{Root: root, Name: name}
			defer l.Close()
			if all {
				n, err := l.Faults().Clear(ctx)
				if err != nil {
					return inputErr(err)
				}
				fmt.Fprintf(opts.stdout, "cleared %d faults\n", n)
				return nil
			}
			p, err := l.Faults().Remove(ctx, args[0])
			if err != nil {
				return inputErr(err)
			}
			fmt.Fprintf(opts.stdout, "cleared %s (%s)\n", p.ID, p.Spec)
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

// inputErr is err, as bad input (exit 2, as everywhere) when it is the
// user's (jobs.IsInput): a lab, node or port not deployed, several labs to
// choose from, a target or NIC that does not parse.
func inputErr(err error) error {
	if jobs.IsInput(err) {
		return badInput(err)
	}
	return err
}

func sortedMapKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// faultTargetArgs splits fault add's arguments into the target and the
// fault: "A to B" and "A and B" take three words.
func faultTargetArgs(args []string) (target string, rest []string) {
	if len(args) >= 3 && (args[1] == "to" || args[1] == "and") {
		return strings.Join(args[:3], " "), args[3:]
	}
	return args[0], args[1:]
}
