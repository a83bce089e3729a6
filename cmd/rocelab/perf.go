package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rocelab/rocelab/endpoint"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// nicResolver finds NICs of a deployed lab's endpoint nodes and keeps one
// client per node.
type nicResolver struct {
	root, lab string
	clients   map[string]*nodeapi.Client
	// scale is the lab's time dilation and rates the resolved NICs' line
	// rates (for perf's estimate of its wall time).
	scale int
	rates map[string]clock.Rate
}

func (r *nicResolver) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

func (r *nicResolver) client(name, socket string) *nodeapi.Client {
	if r.clients == nil {
		r.clients = map[string]*nodeapi.Client{}
	}
	c := r.clients[name]
	if c == nil {
		c = nodeapi.NewClient(socket)
		r.clients[name] = c
	}
	return c
}

// resolve turns HOST[:PORT] (PORT default gpu0) into a NIC reference.
func (r *nicResolver) resolve(spec string) (nodeapi.NICRef, error) {
	host, port, ok := strings.Cut(spec, ":")
	if !ok {
		port = "gpu0"
	}
	if host == "" || port == "" {
		return nodeapi.NICRef{}, badInput(fmt.Errorf("%q: want HOST[:gpuN]", spec))
	}
	l, n, err := deploy.FindNode(r.root, r.lab, host)
	if err != nil {
		return nodeapi.NICRef{}, badInputIf(err)
	}
	if t, err := deploy.Topology(l); err == nil {
		if err := beNIC(t, host, port); err != nil {
			return nodeapi.NICRef{}, badInput(fmt.Errorf("%q: %w", spec, err))
		}
		if r.rates == nil {
			r.rates = map[string]clock.Rate{}
		}
		r.rates[host+":"+port] = t.Node(host).Port(port).Rate
	}
	r.scale = l.Scale
	if n.Socket == "" {
		return nodeapi.NICRef{}, fmt.Errorf("%s in lab %s runs no endpoint process", host, l.Name)
	}
	if r.lab == "" {
		r.lab = l.Name
	}
	return nodeapi.NICRef{Node: host, NIC: host + ":" + port, Client: r.client(host, n.Socket)}, nil
}

// perfEstimate says, before a long bandwidth test, how much wall time it
// will take: its fabric time at the NIC's line rate (or its --duration),
// times the lab's time dilation; "" under 5 s or when unknown (a latency
// test's time depends on the path).
func perfEstimate(spec nodeapi.PerfSpec, rate clock.Rate, scale int) string {
	if spec.Latency || rate <= 0 || scale <= 0 {
		return ""
	}
	fabric := spec.Duration
	what := fmt.Sprintf("%v of fabric time", spec.Duration)
	if fabric <= 0 {
		bits := float64(spec.Iterations) * float64(spec.QPs) * float64(spec.Size) * 8
		fabric = clock.Duration(bits / float64(rate) * float64(clock.Second))
		what = fmt.Sprintf("%d × %d B on %d QPs at %v is at least %v of fabric time", spec.Iterations, spec.Size, spec.QPs, rate, fabric)
	}
	wall := time.Duration(fabric.Seconds() * float64(scale) * float64(time.Second))
	if wall < 5*time.Second {
		return ""
	}
	return fmt.Sprintf("# expect about %v of wall time or more: %s, × %d (the lab's time dilation)", wall.Round(time.Second), what, scale)
}

// beNIC checks, against the lab's topology, that host:port is a back-end
// NIC of a host, and otherwise says what is there instead.
func beNIC(t *topologies.Topology, host, port string) error {
	n := t.Node(host)
	if n == nil {
		return fmt.Errorf("no node %s in the lab", host)
	}
	var hosts, nics []string
	for _, m := range t.Nodes {
		if m.Kind == topologies.KindHost {
			hosts = append(hosts, m.Name)
		}
	}
	for _, p := range n.Ports {
		if p.Plane == topologies.BE {
			nics = append(nics, p.Name)
		}
	}
	if n.Kind != topologies.KindHost || len(nics) == 0 {
		return fmt.Errorf("%s is a %s, not a host with back-end NICs (hosts: %s)", host, n.Kind, strings.Join(hosts, ", "))
	}
	p := n.Port(port)
	switch {
	case p == nil:
		return fmt.Errorf("%s has no NIC %s (its back-end NICs: %s)", host, port, strings.Join(nics, ", "))
	case p.Plane != topologies.BE:
		return fmt.Errorf("%s:%s is a front-end NIC: perf and collectives run on the back end (%s)", host, port, strings.Join(nics, ", "))
	}
	return nil
}

// all returns every NIC of every endpoint node of the lab, in node order.
func (r *nicResolver) all(ctx context.Context) ([]nodeapi.NICRef, error) {
	l, err := deploy.OnlyLab(ctx, r.root, r.lab)
	if err != nil {
		return nil, badInputIf(err)
	}
	var out []nodeapi.NICRef
	for _, n := range l.Nodes {
		if n.Kind == "switch" || n.Socket == "" {
			continue
		}
		c := r.client(n.Name, n.Socket)
		nics, err := c.NICs(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", n.Name, deploy.ErrNodeDead, err)
		}
		for _, nc := range nics {
			out = append(out, nodeapi.NICRef{Node: n.Name, NIC: nc.Name, Client: c})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lab %s has no endpoint NIC", l.Name)
	}
	return out, nil
}

// explain adds the lab's health (dead nodes, links held down) to a job's
// failure.
func (r *nicResolver) explain(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return deploy.Explain(ctx, r.root, r.lab, err)
}

// warnBehind says on w when nodes of the lab are behind its dilated clock
// as a job ends: the job's results were measured while the lab did not
// keep up, so they are not the fabric's. The exit code stays the job's
// (rocelab run is the command that withholds a verdict: exit 3).
func (r *nicResolver) warnBehind(ctx context.Context, w io.Writer) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ps, err := deploy.Diagnose(dctx, r.root, r.lab)
	if err != nil {
		return
	}
	var names []string
	for _, p := range ps {
		if p.What == "behind" {
			names = append(names, p.Node)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "BEHIND: %s did not keep up with the lab's dilated clock as this ended: the results above were measured while the lab fell behind and are not the fabric's (rocelab inspect says by how much; deploy with a larger --scale)\n", strings.Join(names, ", "))
	}
}

// jobFlags are the flags perf and collective share.
type jobFlags struct {
	name, root, mode, cc string
	paths                int
	stall                time.Duration
}

func (f *jobFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", "", "lab name (default: the only lab that has the nodes)")
	cmd.Flags().StringVar(&f.mode, "mode", "rocev2", "reliability mode: rocev2 or metaroce")
	cmd.Flags().StringVar(&f.cc, "cc", "none", "congestion control: none, dcqcn or credit")
	cmd.Flags().IntVar(&f.paths, "paths", 1, "paths a MetaRoCE QP sprays over")
	cmd.Flags().DurationVar(&f.stall, "stall", nodeapi.DefaultStall, "give up when nothing moves for this long (wall clock): names the dead node or down link, exit 1")
	oneOf(cmd.Flags(), "mode", "rocev2", "metaroce")
	oneOf(cmd.Flags(), "cc", endpoint.CCRegistry().Names()...)
	limit(cmd.Flags(), "paths", 1, endpoint.MaxPaths)
	limit(cmd.Flags(), "stall", 0.001, unbounded)
	addRootFlag(cmd, &f.root)
}

// check refuses flags that contradict each other.
func (f *jobFlags) check() error {
	if f.paths > 1 && f.mode != "metaroce" {
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
			spec := nodeapi.PerfSpec{Op: op, Latency: lat, Size: int(sz), Iterations: iters, QPs: qps, TxDepth: depth,
				Mode: jf.mode, CC: jf.cc, Paths: jf.paths, Seed: seed, Stall: jf.stall}
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
			r := &nicResolver{root: jf.root, lab: jf.name}
			defer r.close()
			a, err := r.resolve(from)
			if err != nil {
				return err
			}
			b, err := r.resolve(to)
			if err != nil {
				return err
			}
			if a.NIC == b.NIC {
				return badInput(errors.New("--from and --to name the same NIC"))
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if msg := perfEstimate(spec, r.rates[a.NIC], r.scale); msg != "" {
				fmt.Fprintln(opts.stderr, msg)
			}
			tty := isTerminal(opts.stderr)
			lastTenth := -1
			rep, err := nodeapi.RunPerf(ctx, a, b, spec, func(p nodeapi.PerfResult) {
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
				return r.explain(ctx, err)
			}
			if opts.wantJSON() {
				if err := opts.printJSON(rep); err != nil {
					return err
				}
			} else {
				writePerf(opts, rep, jf)
			}
			r.warnBehind(ctx, opts.stderr)
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
func writePerf(opts *options, rep nodeapi.PerfReport, jf jobFlags) {
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

func checkWord(rep nodeapi.PerfReport) string {
	switch {
	case !rep.Checked:
		return "off"
	case rep.WrongBytes > 0:
		return fmt.Sprintf("FAILED (%d bytes)", rep.WrongBytes)
	}
	return "ok"
}
