package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/tools/stats"
)

func newStatsCmd(opts *options) *cobra.Command {
	var name, root string
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "stats [NODE] [--name LAB] [--watch] [--interval 1s]",
		Short: "Show port, queue, NIC and QP counters and rates of a lab",
		Long: `Stats reads the telemetry of every node process of a lab (or of NODE) twice,
--interval apart, and shows per switch port and per active queue: rx/tx rates,
queue depth now and peak, ECN marks, PFC frames sent and received, time
paused and drops by reason; and per NIC and QP of endpoint nodes: rates,
retransmits and CNPs. Rates and times are in fabric (real) units: the
emulation runs k times slower than the wall clock, and the nodes report
fabric time. Ports are named p1…pN, as in fault and capture. A node that
does not answer is marked DEAD above the tables (in -o json: "dead"); the
other nodes are shown, and the exit code is 1. --watch redraws every
interval until Ctrl-C. Needs root.`,
		Example: `  rocelab stats
  rocelab stats rtsw1 --watch --interval 2s
  rocelab stats host4 --name laptop -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return badInput(fmt.Errorf("--interval %v: want a positive duration", interval))
			}
			if err := requireRoot("stats"); err != nil {
				return err
			}
			node := ""
			if len(args) == 1 {
				node = args[0]
			}
			l, nodes, err := deploy.ProcessNodes(root, name, node)
			if err != nil {
				return inputErr(err)
			}
			var targets []stats.Target
			for _, n := range nodes {
				t := stats.Target{Node: n.Name, Socket: n.Socket, Lab: l.Name, Machine: n.Machine}
				for _, m := range l.Machines {
					if m.Name == n.Machine {
						t.Agent = m.Agent
					}
				}
				targets = append(targets, t)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runStats(ctx, opts, l.Name, targets, interval, watch)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the only deployed lab)")
	// No -w: -w is --write in every other command. Say so to whoever
	// types the old shorthand.
	cmd.Flags().BoolVar(&watch, "watch", false, "redraw every interval until Ctrl-C")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "shorthand flag: 'w'") {
			return badInput(fmt.Errorf("%w: stats redraws with --watch (-w is --write, in capture, graph and the rest)", err))
		}
		return badInput(err)
	})
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "wall-clock time between the two snapshots of a rate")
	limit(cmd.Flags(), "interval", 0.001, 3600)
	addRootFlag(cmd, &root)
	return cmd
}

// runStats prints one report, or one per interval with watch.
func runStats(ctx context.Context, opts *options, lab string, targets []stats.Target, interval time.Duration, watch bool) error {
	tty := isTerminal(opts.stdout)
	prev, _, err := stats.Collect(ctx, targets)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			if watch {
				return nil
			}
			return ctx.Err()
		case <-time.After(interval):
		}
		cur, dead, err := stats.Collect(ctx, targets)
		if err != nil {
			if watch && ctx.Err() != nil {
				return nil
			}
			return err
		}
		r := stats.ComputeAll(prev, cur)
		r.Dead = dead
		prev = cur
		switch {
		case opts.wantJSON():
			if err := opts.printJSON(r); err != nil {
				return err
			}
		default:
			if watch && tty {
				fmt.Fprint(opts.stdout, "\033[H\033[2J")
			} else if i > 0 {
				fmt.Fprintln(opts.stdout)
			}
			fmt.Fprintf(opts.stdout, "lab %s, %s: rates over %s of fabric time\n", lab, time.Now().Format("15:04:05"), stats.Seconds(r.Interval))
			if len(r.Behind) > 0 {
				fmt.Fprintf(opts.stdout, "BEHIND: %s not keeping up with the lab's dilated clock: these rates are not the fabric's (rocelab inspect says by how much)\n", strings.Join(r.Behind, ", "))
			}
			fmt.Fprintln(opts.stdout, stats.Legend)
			if err := stats.WriteTable(opts.stdout, r); err != nil {
				return err
			}
		}
		if !watch {
			if len(dead) > 0 {
				// The report is out, with the dead marked; the exit
				// code tells a script the lab is not whole.
				for _, d := range dead {
					if d.Agent != "" {
						return fmt.Errorf("%d of %d nodes did not answer: %s", len(dead), len(targets), d.Agent)
					}
				}
				return fmt.Errorf("%d of %d nodes did not answer: %w", len(dead), len(targets), deploy.ErrNodeDead)
			}
			return nil
		}
	}
}
