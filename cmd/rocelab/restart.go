package main

import (
	"fmt"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

func newRestartCmd(opts *options) *cobra.Command {
	var name, root string
	cmd := &cobra.Command{
		Use:   "restart NODE [--name LAB]",
		Short: "Bring a lab node's process back, with its configuration, ports and addresses as before",
		Long: `Restart stops NODE's process if it still runs and starts a new one in the
node's namespace with the configuration it was deployed with: the same
ports, MACs, addresses and routes (faults added live are gone). Use it on a
node that rocelab inspect, stats or a stalled perf named dead;
rocelab deploy --repair restarts every dead node of a lab. The netns
runtime only: a docker node's namespace dies with its container. Needs root.`,
		Example: `  rocelab restart rtsw1
  rocelab restart host2 --name laptop`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("restart"); err != nil {
				return err
			}
			n, err := cluster.Restart(cmdContext(cmd), root, name, args[0], deploy.RestartOptions{})
			if err != nil {
				return inputErr(err)
			}
			if opts.wantJSON() {
				return opts.printJSON(n)
			}
			if n.Group != "" {
				fmt.Fprintf(opts.stdout, "restarted %s with its group %s (pid %d)\n", n.Name, n.Group, n.PID)
				return nil
			}
			fmt.Fprintf(opts.stdout, "restarted %s (pid %d)\n", n.Name, n.PID)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the only lab that has the node)")
	addRootFlag(cmd, &root)
	return cmd
}
