package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/node"
)

// newNodeCmd is the hidden `rocelab node`: the process behind one lab node,
// started by deploy inside the node's namespace. It runs until SIGTERM
// (main wires it to the command's context) or POST /shutdown on its socket.
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
			cfg, err := node.Load(config)
			if err != nil {
				return badInput(err)
			}
			log := opts.log.With("node", cfg.Name)
			if nice != 0 {
				// Best effort: a docker node lacks CAP_SYS_NICE.
				if err := node.RaisePriority(nice); err != nil {
					log.Debug("scheduling priority unchanged", "err", err)
				}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return node.Main(ctx, cfg, log)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "node configuration (JSON, written by deploy)")
	cmd.Flags().IntVar(&nice, "nice", node.DefaultNice, "scheduling priority of the node's threads (0: leave it)")
	cmd.MarkFlagRequired("config")
	return cmd
}
