package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/tools/demo"
)

func newDemoCmd(opts *options) *cobra.Command {
	var (
		topo, name, root string
		scale            int
		senders          int
		capacity         bool
		nodeGroups       int
		exactLinks       bool
		socketLinks      bool
		start, repeats   int
		kMin, kMax       int
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Deploy the laptop lab, run an all-reduce and an incast, tell what happened, destroy it",
		Long: `demo is the guided tour: it deploys the default topology (laptop.yaml) in
the emulation lab with the netns runtime, runs a ring all-reduce across every
GPU NIC and an incast into one NIC, prints in plain words what the fabric did
(busbw, PFC pauses, ECN marks, the deepest queue), and destroys the lab. It
needs root and takes a few seconds (about 3 s on a 2-core machine, as the
README says).

Its nodes run in one process (--node-groups 1): their models share one
event loop, and the links between them carry frames in memory, exact in
fabric time, so the lab runs at a smaller scale factor (k about 200 where
a process per node needs about 1,900). --node-groups 0 deploys a process
per node, as rocelab deploy does by default.

With --capacity it measures the lab's lossless capacity instead: it deploys
the topology at one scale factor after another (from --start, by default
the k that scale: auto picks for the lab; halving or doubling, then
bisecting), runs the incast and an all-to-all across every GPU NIC
--repeats times at each, and reports the smallest k at which nothing was
lost on a lossless class and the loops kept up with the wall clock (p99
lag at most 20 ms), as frames per second per CPU (the figure scale: auto
divides the fabric's frame rate by; for one group, per lab), with each
probe's loop lag and CPU per frame. It takes a few minutes.`,
		Example: `  rocelab demo
  rocelab demo --node-groups 0
  rocelab demo --capacity`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("demo"); err != nil {
				return err
			}
			t, err := loadTopology(topo)
			if err != nil {
				return badInput(err)
			}
			if capacity {
				return runCapacity(cmd, opts, demo.CapacityOptions{
					Setup: demo.Setup{Topology: t, LabName: name, Root: root, IncastSenders: senders, NodeGroups: nodeGroups, ExactLinks: exactLinks, SocketLinks: socketLinks},
					Start: start, Min: kMin, Max: kMax, Repeats: repeats, Log: opts.stderr,
				})
			}
			res, err := demo.Run(cmd.Context(), demo.Options{
				Setup: demo.Setup{Topology: t, LabName: name, Root: root, IncastSenders: senders, NodeGroups: nodeGroups, ExactLinks: exactLinks, SocketLinks: socketLinks},
				Scale: scale, Out: opts.stdout, Log: opts.stderr,
			})
			if err != nil {
				return err
			}
			if opts.wantJSON() {
				return opts.printJSON(res)
			}
			fmt.Fprintf(opts.stderr, "The demo took %v, and its lab is destroyed.\n", res.Total.Round(100*time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&topo, "topology", "t", "", "topology file or built-in name (default laptop)")
	f.StringVar(&name, "name", "demo", "lab name")
	f.StringVar(&root, "root", "", "run directory root (default /run/rocelab)")
	f.IntVar(&scale, "scale", 0, "scale factor k (0: auto)")
	f.IntVar(&senders, "senders", 4, "NICs in the incast")
	f.BoolVar(&exactLinks, "exact-links", true, "frames between nodes carry their sender's lateness, and the node loops run ahead of the wall clock (see deploy; --exact-links=false turns it off)")
	f.BoolVar(&socketLinks, "socket-links", false, "links between two nodes of one group carry their frames through their veths, not in memory (see deploy)")
	f.IntVar(&nodeGroups, "node-groups", 1, "run the nodes in this many processes, each group's models on one loop, links inside a group in memory (0: a process per node, as deploy does by default)")
	f.BoolVar(&capacity, "capacity", false, "measure the lossless capacity (search over the scale factor) instead of the tour")
	f.IntVar(&start, "start", 0, "with --capacity: the first scale factor tried (0: what scale: auto picks for the lab)")
	f.IntVar(&repeats, "repeats", 2, "with --capacity: runs of each workload per scale factor")
	f.IntVar(&kMin, "min", 100, "with --capacity: the smallest scale factor tried")
	f.IntVar(&kMax, "max", 40000, "with --capacity: the largest scale factor tried (--start = --min = --max probes one k)")
	limit(f, "scale", 0, maxScale)
	limit(f, "senders", 1, 4096)
	limit(f, "node-groups", 0, 65535)
	limit(f, "start", 0, maxScale)
	limit(f, "repeats", 1, 100)
	limit(f, "min", 1, maxScale)
	limit(f, "max", 1, maxScale)
	return cmd
}

// runCapacity runs demo.FindCapacity and prints its probes and answer.
func runCapacity(cmd *cobra.Command, opts *options, co demo.CapacityOptions) error {
	if co.Start < 0 || co.Repeats < 1 || co.Min < 1 || co.Max < co.Min {
		return badInput(fmt.Errorf("--start must be 0 (auto) or more, --repeats and --min at least 1, --max at least --min"))
	}
	res, err := demo.FindCapacity(cmd.Context(), co)
	if err != nil {
		return err
	}
	if opts.wantJSON() {
		return opts.printJSON(res)
	}
	w := opts.stdout
	fmt.Fprintf(w, "%-7s %-5s %9s %9s %14s %10s %10s %10s %9s %9s %9s %9s %9s %s\n", "k", "pass", "lossless", "drops", "incast Gb/s", "lag p50", "lag p99", "lag max",
		"frames/s", "wake/s", "fr/read", "sys/turn", "cpu/frame", "read/model/write per frame")
	for _, p := range res.Probes {
		l := p.Loops
		fmt.Fprintf(w, "%-7d %-5v %9.0f %9.0f %6.0f of %-4.0f %10v %10v %10v %9.0f %9.0f %9.2f %9.2f %9v %v/%v/%v\n", p.Scale, p.Pass, p.LosslessDrops, p.Drops,
			p.IncastGbps, p.IncastLine, l.LagP50.Round(time.Microsecond), l.LagP99.Round(time.Microsecond), l.LagMax.Round(time.Microsecond),
			l.FramesPerSecond, l.WakeupsPerSecond, l.FramesPerRead, l.SyscallsPerTurn, l.CPUPerFrame.Round(100*time.Nanosecond),
			l.ReadPerFrame.Round(10*time.Nanosecond), l.ModelPerFrame.Round(10*time.Nanosecond), l.WritePerFrame.Round(10*time.Nanosecond))
	}
	if res.MinScale == 0 {
		fmt.Fprintf(w, "no scale factor up to the search's maximum was lossless\n")
		return nil
	}
	if (deploy.Options{NodeGroups: co.NodeGroups, SocketLinks: co.SocketLinks}).OneLoop() {
		// One loop on one CPU: deploy.DefaultGroupCapacityPPS is the lab's
		// figure, not a figure per CPU.
		fmt.Fprintf(w, "lossless capacity of %s in one node group: smallest lossless and on-time k = %d → %.0f frames/s for the lab (fabric %.0f frames/s at full load; scale: auto assumes %d)\n",
			res.Topology, res.MinScale, res.FabricPPS/float64(res.MinScale), res.FabricPPS, deploy.DefaultGroupCapacityPPS)
		return nil
	}
	fmt.Fprintf(w, "lossless capacity of %s: smallest lossless k = %d → %.0f frames/s per CPU (fabric %.0f frames/s at full load, %d CPUs)\n",
		res.Topology, res.MinScale, res.PerCPU, res.FabricPPS, res.CPUs)
	return nil
}
