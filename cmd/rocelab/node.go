package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/node"
)

// newNodeCmd is the hidden `rocelab node`: the process behind one lab node,
// started by deploy inside the node's namespace when no rocelab-node binary
// stands beside rocelab (nodeapi.Command). It runs until SIGTERM (main
// wires it to the command's context) or POST /shutdown on its socket.
func newNodeCmd(opts *options) *cobra.Command {
	var (
		config string
		nice   int
	)
	cmd := &cobra.Command{
		Use:    "node --config FILE",
		Short:  "Run one lab node (started by deploy)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			err := node.Run(ctx, config, nice, opts.log)
			if errors.Is(err, node.ErrConfig) {
				return badInput(err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "node configuration (JSON, written by deploy)")
	cmd.Flags().IntVar(&nice, "nice", node.DefaultNice, "scheduling priority of the node's threads (0: leave it)")
	cmd.MarkFlagRequired("config")
	return cmd
}
