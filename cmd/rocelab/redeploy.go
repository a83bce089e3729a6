package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/cluster"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

func newRedeployCmd(opts *options) *cobra.Command {
	var name, root string
	cmd := &cobra.Command{
		Use:   "redeploy [--name LAB]",
		Short: "Destroy a lab and deploy it again as it was (topology, scale, seed, runtime, node groups)",
		Long: `Redeploy destroys a lab and deploys it again from its own books: the
topology as deployed (the copy in its run directory, whatever became of the
file since), its scale factor and seed, its runtime, its node groups and
exact or socket links — what containerlab's redeploy does. Faults added
live and programs running in the lab are gone; a fresh lab has fresh
counters. A lab that spans machines is deployed again with rocelab deploy
--agents. Needs root.`,
		Example: `  rocelab redeploy
  rocelab redeploy --name laptop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("redeploy"); err != nil {
				return err
			}
			if name == "" {
				labs, _ := state.List(state.RootOr(root))
				if len(labs) != 1 {
					return badInput(fmt.Errorf("redeploy: %d labs are deployed (%s): say which with --name", len(labs), strings.Join(labs, ", ")))
				}
				name = labs[0]
			}
			o, runtime, err := deploy.Again(root, name)
			if errors.Is(err, deploy.ErrNotRedeployable) {
				return badInput(err)
			}
			if err != nil {
				return inputErr(err)
			}
			if runtime == docker.Name {
				drt, err := docker.New(docker.Options{})
				if err != nil {
					return err
				}
				defer drt.Close()
				o.Runtime = drt
			}
			if _, err := cluster.Destroy(cmd.Context(), root, name); err != nil {
				return fmt.Errorf("redeploy %s: %w", name, err)
			}
			fmt.Fprintf(opts.stdout, "destroyed lab %s\n", name)
			o.Progress = progress(opts.stderr)
			lab, err := cluster.Deploy(cmd.Context(), o, nil)
			if err != nil {
				return fmt.Errorf("redeploy %s: %w", name, err)
			}
			if opts.wantJSON() {
				return opts.printJSON(lab)
			}
			fmt.Fprintf(opts.stdout, "lab %s deployed again (%s, runtime %s, scale %d, run dir %s)\n", lab.Name, lab.Topology, lab.Runtime, lab.Scale, lab.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the only lab)")
	addRootFlag(cmd, &root)
	return cmd
}
