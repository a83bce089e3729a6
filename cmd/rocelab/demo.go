package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/demo"
)

func newDemoCmd(opts *options) *cobra.Command {
	var (
		topo, name, root string
		scale            int
		senders          int
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Deploy the laptop lab, run an all-reduce and an incast, tell what happened, destroy it",
		Long: `demo is the guided tour: it deploys the default topology (laptop.yaml) in
the emulation lab with the netns runtime, runs a ring all-reduce across every
GPU NIC and an incast into one NIC, prints in plain words what the fabric did
(busbw, PFC pauses, ECN marks, the deepest queue), and destroys the lab. It
needs root and takes well under two minutes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("demo"); err != nil {
				return err
			}
			t, err := loadTopology(topo)
			if err != nil {
				return badInput(err)
			}
			res, err := demo.Run(cmd.Context(), demo.Options{
				Topology: t, LabName: name, Root: root, Scale: scale,
				IncastSenders: senders, Out: opts.stdout, Log: opts.stderr,
			})
			if err != nil {
				return err
			}
			if opts.wantJSON() {
				return opts.printJSON(res)
			}
			opts.log.Info("demo done", "total", res.Total.Round(100*time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&topo, "topology", "t", "", "topology file or built-in name (default laptop)")
	f.StringVar(&name, "name", "demo", "lab name")
	f.StringVar(&root, "root", "", "run directory root (default /run/rocelab)")
	f.IntVar(&scale, "scale", 0, "time dilation factor (0: auto)")
	f.IntVar(&senders, "senders", 4, "NICs in the incast")
	return cmd
}
