package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/endpoint"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// warnBehind says on w which nodes of l are behind its scaled clock now:
// the results just printed were measured while they were.
func warnBehind(ctx context.Context, l *jobs.Lab, w io.Writer) {
	if names := l.Behind(ctx); len(names) > 0 {
		fmt.Fprintf(w, "BEHIND: %s did not keep up with the lab's scaled clock as this ended: the results above were measured while the lab fell behind and are not the fabric's (rocelab inspect says by how much; deploy with a larger --scale)\n", strings.Join(names, ", "))
	}
}

// jobFlags are the flags perf and collective share.
type jobFlags struct {
	name, root, mode, cc string
	paths                int
	stall                time.Duration
	// reliability is mode parsed (check).
	reliability endpoint.Mode
}

func (f *jobFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", "", "lab name (default: the only lab that has the nodes)")
	cmd.Flags().StringVar(&f.mode, "mode", "rocev2", "reliability mode: rocev2 or metaroce")
	cmd.Flags().StringVar(&f.cc, "cc", "none", "congestion control: none, dcqcn or credit")
	cmd.Flags().IntVar(&f.paths, "paths", 1, "paths a MetaRoCE QP sprays over")
	cmd.Flags().DurationVar(&f.stall, "stall", jobs.DefaultStall, "give up when nothing moves for this long (wall clock): names the dead node or down link, exit 1")
	oneOf(cmd.Flags(), "mode", "rocev2", "metaroce")
	oneOf(cmd.Flags(), "cc", endpoint.CCRegistry().Names()...)
	limit(cmd.Flags(), "paths", 1, endpoint.MaxPaths)
	limit(cmd.Flags(), "stall", 0.001, unbounded)
	addRootFlag(cmd, &f.root)
}

// check refuses flags that contradict each other.
func (f *jobFlags) check() error {
	m, err := endpoint.ParseMode(f.mode)
	if err != nil {
		return fmt.Errorf("--mode: %w", err)
	}
	f.reliability = m
	if f.paths > 1 && m != endpoint.ModeMetaRoCE {
		return fmt.Errorf("--paths %d: a %s QP sends on one path; spraying over paths needs --mode metaroce", f.paths, f.mode)
	}
	return nil
}

func newPerfCmd(opts *options) *cobra.Command {
	var jf jobFlags
	var from, to, size, duration string
	var qps, iters, depth int
	var lat bool
	var seed uint64
	cmd := &cobra.Command{
		Use:   "perf write|read|send --from HOST[:gpuN] --to HOST[:gpuN]",
		Short: "Run a perftest-style test (ib_write_bw, ib_read_lat, …) between two NICs of a lab",
		Long: `Perf creates QPs on the two hosts' endpoint processes, connects them, runs a
bandwidth test (or, with --lat, a latency test) and prints it like perftest.
The nodes measure in fabric time, so results are in real units (400G, µs)
whatever the lab's time dilation. The data is checked: the receiving side
compares what arrived with the pattern the sender wrote. When nothing moves
for --stall (a dead node, a link held down), perf stops, names what the
lab's health finds wrong and exits 1. Needs root.`,
		Example: `  rocelab perf write --from host1 --to host4
  rocelab perf read --from host1:gpu1 --to host3:gpu1 --qps 4 --size 64K
  rocelab perf send --from host2 --to host4 --duration 5ms --mode metaroce --cc dcqcn
  rocelab perf write --from host1 --to host4 --lat`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"write", "read", "send"},
		RunE: func(cmd *cobra.Command, args []string) error {
			op := args[0]
			if err := jf.check(); err != nil {
				return badInput(err)
			}
			if op != "write" && op != "read" && op != "send" {
				return badInput(fmt.Errorf("operation %q: want write, read or send", op))
			}
			if from == "" || to == "" {
				return badInput(errors.New("--from and --to are required"))
			}
			for _, f := range []struct {
				name string
				v    int
			}{{"--iters", iters}, {"--qps", qps}, {"--tx-depth", depth}} {
				if f.v < 1 {
					return badInput(fmt.Errorf("%s %d: want at least 1", f.name, f.v))
				}
			}
			if qps > nodeapi.MaxQPsPerNIC {
				return badInput(fmt.Errorf("--qps %d: at most %d QPs per NIC (each costs the endpoint node memory, a buffer and telemetry)", qps, nodeapi.MaxQPsPerNIC))
			}
			sz, err := collective.ParseSize(size)
			if err != nil || sz < 1 || sz > 1<<30 {
				return badInput(fmt.Errorf("--size %q: want 1 B .. 1 GiB", size))
			}
			spec := jobs.PerfSpec{Op: op, Latency: lat, Size: int(sz), Iterations: iters, QPs: qps, TxDepth: depth,
				Mode: jf.reliability, CC: jf.cc, Paths: jf.paths, Seed: seed, Stall: jf.stall}
			if duration != "" {
				d, err := time.ParseDuration(duration)
				if err != nil || d <= 0 {
					return badInput(fmt.Errorf("--duration %q: want a positive duration of fabric time (e.g. 10ms)", duration))
				}
				spec.Duration = clock.FromNanos(d.Nanoseconds())
				spec.Iterations = 0
			}
			if jf.stall <= 0 {
				return badInput(fmt.Errorf("--stall %v: want a positive duration", jf.stall))
			}
			if err := requireRoot("perf"); err != nil {
				return err
			}
			l := &jobs.Lab{Root: jf.root, Name: jf.name}
			defer l.Close()
			a, err := l.NIC(from)
			if err != nil {
				return inputErr(err)
			}
			b, err := l.NIC(to)
			if err != nil {
				return inputErr(err)
			}
			if a.NIC == b.NIC {
				return badInput(errors.New("--from and --to name the same NIC"))
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if msg := l.Estimate(spec, a); msg != "" {
				fmt.Fprintln(opts.stderr, "# "+msg)
			}
			tty := isTerminal(opts.stderr)
			lastTenth := -1
			rep, err := jobs.RunPerf(ctx, a, b, spec, func(p nodeapi.PerfResult) {
				if tty {
					fmt.Fprintf(opts.stderr, "\r%s %s → %s: %3.0f%%  %d msgs  %.2f Gb/s ", op, a.NIC, b.NIC, 100*p.Progress, p.Messages, p.BWAvg)
					return
				}
				// A log or a pipe gets a line per tenth, not a redrawn line.
				if tenth := int(10 * p.Progress); tenth > lastTenth {
					lastTenth = tenth
					fmt.Fprintf(opts.stderr, "# %s %s → %s: %3.0f%%  %d msgs  %.2f Gb/s\n", op, a.NIC, b.NIC, 100*p.Progress, p.Messages, p.BWAvg)
				}
			})
			if tty {
				fmt.Fprintln(opts.stderr)
			}
			if err != nil {
				return l.Explain(ctx, err)
			}
			if opts.wantJSON() {
				if err := opts.printJSON(rep); err != nil {
					return err
				}
			} else {
				writePerf(opts, rep, jf)
			}
			warnBehind(ctx, l, opts.stderr)
			if rep.WrongBytes > 0 {
				return fmt.Errorf("data check failed: %d bytes differ from what was sent", rep.WrongBytes)
			}
			return nil
		},
	}
	jf.add(cmd)
	cmd.Flags().StringVar(&from, "from", "", "client NIC, HOST[:gpuN] (default port gpu0)")
	cmd.Flags().StringVar(&to, "to", "", "server NIC, HOST[:gpuN]")
	cmd.Flags().StringVar(&size, "size", strconv.Itoa(perftest.DefaultSize), "message size (K, M, G units)")
	cmd.Flags().IntVar(&qps, "qps", 1, fmt.Sprintf("QP pairs (at most %d: an endpoint node's QPs per NIC)", nodeapi.MaxQPsPerNIC))
	cmd.Flags().IntVar(&iters, "iters", perftest.DefaultIterations, "messages per QP")
	cmd.Flags().StringVar(&duration, "duration", "", "run for this much fabric time instead of --iters (e.g. 5ms)")
	cmd.Flags().IntVar(&depth, "tx-depth", perftest.DefaultTxDepth, "messages each QP keeps posted")
	cmd.Flags().BoolVar(&lat, "lat", false, "latency test (one message in flight; ping-pong for write and send)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the data pattern")
	limit(cmd.Flags(), "qps", 1, nodeapi.MaxQPsPerNIC)
	limit(cmd.Flags(), "iters", 1, 1e12)
	limit(cmd.Flags(), "tx-depth", 1, 1<<20)
	limit(cmd.Flags(), "seed", 0, unbounded)
	return cmd
}

var perfTitles = map[string]string{"write": "RDMA_Write", "read": "RDMA_Read", "send": "Send"}

// writePerf prints rep like perftest.
func writePerf(opts *options, rep jobs.PerfReport, jf jobFlags) {
	r := rep.Client
	w := opts.stdout
	line := strings.Repeat("-", 87)
	kind := "BW"
	if r.Latency {
		kind = "Latency"
	}
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, "                    %s %s Test\n", perfTitles[r.Op], kind)
	fmt.Fprintf(w, " %s -> %s   QPs: %d   Mode: %s   CC: %s   Data check: %s\n", rep.From, rep.To, r.QPs, rep.Mode, jf.cc, checkWord(rep))
	fmt.Fprintln(w, line)
	iters := r.Messages / int64(max(r.QPs, 1))
	if !r.Latency {
		fmt.Fprintln(w, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
		fmt.Fprintf(w, " %-10d %-14d %-18.2f %-20.2f %.6f\n", r.Size, iters, r.BWPeak, r.BWAvg, r.MsgRate)
	} else if l := r.Lat; l != nil {
		us := func(d clock.Duration) float64 { return d.Micros() }
		fmt.Fprintln(w, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    99% percentile[usec]   99.9% percentile[usec]")
		fmt.Fprintf(w, " %-6d %-14d %-14.2f %-12.2f %-18.2f %-14.2f %-22.2f %.2f\n", r.Size, iters, us(l.Min), us(l.Max), us(l.Typical), us(l.Avg), us(l.P99), us(l.P999))
	}
	fmt.Fprintln(w, line)
}

func checkWord(rep jobs.PerfReport) string {
	switch {
	case !rep.Checked:
		return "off"
	case rep.WrongBytes > 0:
		return fmt.Sprintf("FAILED (%d bytes)", rep.WrongBytes)
	}
	return "ok"
}
