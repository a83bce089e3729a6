package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

func newInspectCmd(opts *options) *cobra.Command {
	var name, root string
	cmd := &cobra.Command{
		Use:   "inspect [--name N]",
		Short: "List the running labs and their nodes",
		Long: `Inspect lists the labs on this machine (or the one --name gives) with every
node: kind, role, namespace, process, addresses, interfaces, the user's image
(when a node has one), and the health of each node process (GET /health on
its socket) and of each user container and its endpoint sidecar. Needs root.`,
		Example: `  rocelab inspect
  rocelab inspect --name laptop -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("inspect"); err != nil {
				return err
			}
			labs, err := deploy.Inspect(cmd.Context(), root, name)
			if err != nil {
				return inputErr(err) // a lab that is not deployed is bad input
			}
			if opts.wantJSON() {
				if labs == nil {
					labs = []deploy.LabStatus{}
				}
				if err := opts.printJSON(labs); err != nil {
					return err
				}
				for _, l := range labs {
					if len(l.Unreachable) > 0 {
						return fmt.Errorf("lab %s: %s", l.Name, l.Unreachable[0].String())
					}
				}
				return nil
			}
			if len(labs) == 0 {
				fmt.Fprintln(opts.stdout, "no labs")
				return nil
			}
			cut := 0 // machines unreachable
			for i, l := range labs {
				if i > 0 {
					fmt.Fprintln(opts.stdout)
				}
				if l.Lab == nil {
					fmt.Fprintf(opts.stdout, "lab %s: %s (%d objects recorded; rocelab destroy --name %s cleans it up)\n", l.Name, l.Status, l.Objects, l.Name)
					continue
				}
				status := l.Status
				if len(l.Behind) > 0 {
					status += fmt.Sprintf(", BEHIND its dilated clock (%d of %d nodes: what it measures now is not the fabric's; a larger --scale keeps up)", len(l.Behind), len(l.Nodes))
				}
				fmt.Fprintf(opts.stdout, "lab %s: %s (%s, runtime %s, scale %d, since %s)\n", l.Name, status, l.Topology, l.Runtime, l.Scale, l.Created.Local().Format("2006-01-02 15:04:05"))
				if err := deploy.WriteMachines(opts.stdout, l.Lab); err != nil {
					return err
				}
				if err := deploy.WriteTable(opts.stdout, l.Nodes, true); err != nil {
					return err
				}
				for _, p := range l.Unreachable {
					fmt.Fprintf(opts.stdout, "machine %s UNREACHABLE: %s\n", p.Machine, p.String())
					cut++
				}
			}
			if cut > 0 {
				// The lab is not known to be whole: a script hears it.
				return fmt.Errorf("%d machine%s of the labs above cannot be reached through %s agent%s", cut, plural(cut), map[bool]string{true: "its", false: "their"}[cut == 1], plural(cut))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "only this lab")
	addRootFlag(cmd, &root)
	return cmd
}
