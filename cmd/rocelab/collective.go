package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

func newCollectiveCmd(opts *options) *cobra.Command {
	var jf jobFlags
	var ranks, sizes, typ string
	var warmup, iters, slice, window int
	var check bool
	var seed uint64
	cmd := &cobra.Command{
		Use:   "collective allreduce|allgather|reducescatter|alltoall [--ranks host1:gpu0,… | all]",
		Short: "Run an NCCL-style collective across the hosts of a lab and print an nccl-tests table",
		Long: `Collective connects one QP pair per pair of ranks that talk (ring neighbours;
every pair for all-to-all), gives each host's endpoint process its ranks, and
runs the sizes in turn, each warmup+iters times. Every iteration starts on all
hosts at the same instant; a size's time is the slowest host's, #wrong sums
the hosts' wrong elements (data is checked unless --check=false). Times are
fabric time, in real units. The table has nccl-tests' layout, its
out-of-place and in-place columns and its footer; the lab runs each size
out of place only, so the in-place columns say n/a and the average bus
bandwidth is the out-of-place one. Needs root.`,
		Example: `  rocelab collective allreduce --sizes 1MB:4MB
  rocelab collective allgather --ranks host1:gpu0,host2:gpu0,host3:gpu0,host4:gpu0 --iters 10
  rocelab collective alltoall --sizes 64KB --name laptop -o json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"allreduce", "allgather", "reducescatter", "alltoall"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := collective.ParseOp(args[0]); err != nil {
				return badInput(err)
			}
			if err := jf.check(); err != nil {
				return badInput(err)
			}
			if jf.stall <= 0 {
				return badInput(fmt.Errorf("--stall %v: want a positive duration", jf.stall))
			}
			sz, err := collective.ParseSizes(sizes)
			if err != nil {
				return badInput(err)
			}
			if iters < 1 || warmup < 0 {
				return badInput(errors.New("--iters must be >= 1 and --warmup >= 0"))
			}
			if err := requireRoot("collective"); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			l := &jobs.Lab{Root: jf.root, Name: jf.name}
			defer l.Close()
			var refs []jobs.NICRef
			if ranks == "all" {
				if refs, err = l.AllNICs(ctx); err != nil {
					return inputErr(err)
				}
			} else {
				seen := map[string]bool{}
				for _, s := range strings.Split(ranks, ",") {
					ref, err := l.NIC(strings.TrimSpace(s))
					if err != nil {
						return inputErr(err)
					}
					if seen[ref.NIC] {
						return badInput(fmt.Errorf("rank %s listed twice", ref.NIC))
					}
					seen[ref.NIC] = true
					refs = append(refs, ref)
				}
			}
			if len(refs) < 2 {
				return badInput(fmt.Errorf("%d ranks: want at least 2", len(refs)))
			}
			if err := checkRegions(args[0], len(refs), sz); err != nil {
				return badInput(err)
			}
			spec := jobs.CollectiveSpec{Op: args[0], Ranks: refs, Sizes: sz, Warmup: warmup, Iters: iters, Check: check,
				Seed: seed, Type: typ, SliceBytes: slice, Window: window, Mode: jf.reliability, CC: jf.cc, Paths: jf.paths, Stall: jf.stall}
			tty := isTerminal(opts.stderr)
			spec.Tick = func(done, total int) {
				if tty {
					fmt.Fprintf(opts.stderr, "\r\033[K# %d/%d iterations", done, total)
				}
			}
			fmt.Fprintf(opts.stderr, "# %s on %d ranks (%d hosts), mode %s, cc %s\n", args[0], len(refs), hostsOf(refs), jf.mode, jf.cc)
			res, err := jobs.RunCollective(ctx, spec, func(x collective.Result) {
				if tty {
					fmt.Fprint(opts.stderr, "\r\033[K")
				}
				fmt.Fprintf(opts.stderr, "# %d B done: %.2f us, busbw %.2f GB/s\n", x.Size, x.TimeUs, x.BusBW)
			})
			if tty {
				fmt.Fprint(opts.stderr, "\r\033[K")
			}
			if err != nil {
				return l.Explain(ctx, err)
			}
			if opts.wantJSON() {
				if err := opts.printJSON(res); err != nil {
					return err
				}
			} else if err := writeNCCLTable(opts.stdout, res); err != nil {
				return err
			}
			warnBehind(ctx, l, opts.stderr)
			var wrong int64
			for _, x := range res {
				wrong += x.Wrong
			}
			if wrong > 0 {
				return fmt.Errorf("data check failed: %d wrong elements", wrong)
			}
			return nil
		},
	}
	jf.add(cmd)
	cmd.Flags().StringVar(&ranks, "ranks", "all", "ranks in order, host1:gpu0,host2:gpu0,… or all (every NIC of every host)")
	cmd.Flags().StringVar(&sizes, "sizes", "1MB:64MB", "sizes: MIN:MAX (doubling), MIN:MAX:xF, MIN:MAX:+STEP or a list")
	cmd.Flags().IntVar(&warmup, "warmup", 1, "warmup iterations per size")
	cmd.Flags().IntVar(&iters, "iters", 5, "measured iterations per size")
	cmd.Flags().BoolVar(&check, "check", true, "fill the inputs and check every element")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the data")
	cmd.Flags().StringVar(&typ, "type", "float", "element type: float or int32")
	cmd.Flags().IntVar(&slice, "slice", 0, "bytes per write (default 512 KiB, as NCCL)")
	cmd.Flags().IntVar(&window, "window", 0, "writes each rank keeps in flight (default 8)")
	limit(cmd.Flags(), "warmup", 0, 1e6)
	limit(cmd.Flags(), "iters", 1, 1e6)
	limit(cmd.Flags(), "seed", 0, unbounded)
	limit(cmd.Flags(), "slice", 0, 1<<30)
	limit(cmd.Flags(), "window", 0, 4096)
	oneOf(cmd.Flags(), "type", "float", "int32")
	return cmd
}

// checkRegions refuses sizes whose receive region would exceed what a
// node registers (nodeapi.MaxRegionBytes), before any node is asked.
func checkRegions(op string, ranks int, sizes []int64) error {
	o, err := collective.ParseOp(op)
	if err != nil {
		return err
	}
	for _, s := range sizes {
		lay, err := collective.NewLayout(o, ranks, s)
		if err != nil {
			return err
		}
		if r := lay.RegionBytes(); r > nodeapi.MaxRegionBytes {
			return fmt.Errorf("--sizes: %d bytes over %d ranks needs a %d-byte receive region; a node registers at most %d (1 GiB)", s, ranks, r, nodeapi.MaxRegionBytes)
		}
	}
	return nil
}

// hostsOf counts the hosts of refs.
func hostsOf(refs []jobs.NICRef) int {
	hosts := map[string]bool{}
	for _, r := range refs {
		hosts[r.Node] = true
	}
	return len(hosts)
}
