package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/node"
)

// newNodeCmd is the hidden `rocelab node`: the process behind one lab node
// (or, given several --config, a node.Group), started by
// deploy when no rocelab-node binary stands beside rocelab
// (state.NodeCommand). It runs until SIGTERM (main
// wires it to the command's context) or POST /shutdown on its socket.
func newNodeCmd(opts *options) *cobra.Command {
	var (
		configs []string
		nice    int
		readyFD int
	)
	cmd := &cobra.Command{
		Use:     "node --config FILE [--config FILE…]",
		Short:   "Run one lab node (started by deploy)",
		Example: `  rocelab node --config /run/rocelab/laptop/rtsw1.json`,
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			var ready func()
			var err error
			if readyFD != 0 {
				ready, err = node.ReadyFD(readyFD)
			}
			if err == nil {
				err = node.RunConfigs(ctx, configs, nice, ready, opts.log)
			}
			if errors.Is(err, node.ErrConfig) {
				return badInput(err)
			}
			return err
		},
	}
	cmd.Flags().StringArrayVar(&configs, "config", nil, "node configuration (JSON, written by deploy); several run one group of nodes on one loop")
	cmd.Flags().IntVar(&nice, "nice", node.DefaultNice, "scheduling priority of the node's threads (0: leave it)")
	cmd.Flags().IntVar(&readyFD, "ready-fd", 0, "write \"ready\" to this inherited descriptor (a pipe from the starter) once the node answers /health")
	limit(cmd.Flags(), "nice", -20, 19)
	limit(cmd.Flags(), "ready-fd", 0, 1<<20)
	cmd.MarkFlagRequired("config")
	return cmd
}
