package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

func newCaptureCmd(opts *options) *cobra.Command {
	var name, root, file, dir string
	var count int
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "capture NODE:PORT -w FILE.pcap [-c N] [--dir rx|tx|both] [--name LAB] [--wall-duration D]",
		Short: "Capture a node port's frames, as the model sent and received them, to a pcap",
		Long: `Capture asks a node process to record the frames one of its ports receives
and sends — as its model saw them, with timestamps in fabric (real) time —
into a pcap file, until -c frames, --wall-duration (wall-clock time, not
fabric time: at a scale factor k, 5s of wall clock is 5s/k of fabric time)
or Ctrl-C, then prints how many frames it wrote. PORT is the topology's port name (p1) or the interface name.
Open the file with Wireshark or tshark: RoCEv2 decodes as InfiniBand, PFC as
MAC control. Needs root.`,
		Example: `  rocelab capture rtsw2:p3 -w p3.pcap -c 1000
  rocelab capture host4:gpu0 -w gpu0.pcap --dir rx --wall-duration 5s
  rocelab capture rtsw1:p1 -w p1.pcap --name laptop -c 100`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch dir {
			case "rx", "tx", "both":
			default:
				return badInput(fmt.Errorf("--dir %q: want rx, tx or both", dir))
			}
			if file == "" {
				return badInput(errors.New("-w FILE is required"))
			}
			if count < 0 || duration < 0 {
				return badInput(errors.New("-c and --wall-duration must not be negative"))
			}
			if err := requireRoot("capture"); err != nil {
				return err
			}
			if count == 0 && duration == 0 {
				fmt.Fprintln(opts.stderr, "capturing until Ctrl-C")
			}
			waiting := func(target string) {
				fmt.Fprintf(opts.stderr, "no frame on %s yet: waiting (the port is idle; Ctrl-C stops)\n", target)
			}
			res, err := cluster.Capture(cmd.Context(), root, name, args[0], deploy.CaptureOptions{File: file, Frames: count, Dir: dir, Duration: duration, Waiting: waiting})
			if err != nil {
				return inputErr(err)
			}
			if opts.wantJSON() {
				return opts.printJSON(res)
			}
			fmt.Fprintf(opts.stdout, "%d frame%s captured on %s:%s (%s) to %s\n", res.Frames, plural(res.Frames), res.Node, res.Port, res.IfName, res.File)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "write", "w", "", "pcap file to write")
	cmd.Flags().IntVarP(&count, "count", "c", 0, "stop after this many frames (0: no limit)")
	cmd.Flags().StringVar(&dir, "dir", "both", "direction seen from the port: rx, tx or both")
	cmd.Flags().DurationVar(&duration, "wall-duration", 0, "stop after this much wall-clock time (0: no limit)")
	// --duration was this flag's name; perf's --duration is fabric time.
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this much wall-clock time (0: no limit); deprecated: --wall-duration")
	cmd.Flags().MarkDeprecated("duration", "it is wall-clock time here (perf's --duration is fabric time): use --wall-duration")
	limit(cmd.Flags(), "count", 0, 1e12)
	limit(cmd.Flags(), "wall-duration", 0, unbounded)
	limit(cmd.Flags(), "duration", 0, unbounded)
	cmd.Flags().StringVar(&name, "name", "", "lab name")
	addRootFlag(cmd, &root)
	return cmd
}
