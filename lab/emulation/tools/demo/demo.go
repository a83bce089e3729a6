// Package demo is rocelab's guided tour, the job behind `rocelab demo` and
// `make demo`: it deploys the default laptop topology in the emulation lab,
// runs a ring all-reduce across every GPU NIC and then an incast into one
// NIC, tells in plain words what the fabric did — busbw, PFC pauses, ECN
// marks, the deepest queue — and destroys the lab again, whatever happens.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/emulation/tools/stats"
	"github.com/rocelab/rocelab/topologies"
)

// Setup is the lab a run deploys and the incast it drives, for the demo
// (Options) and the capacity search (CapacityOptions). Zero values take
// the defaults named.
type Setup struct {
	// Topology is the fabric (default: the built-in laptop topology).
	Topology *topologies.Topology
	// LabName (default "demo" or "capacity"), Root (default /run/rocelab)
	// and Binary (default: this executable) are passed to deploy.
	LabName, Root, Binary string
	// IncastSenders is how many NICs send into one (default 4).
	IncastSenders int
	// IncastDuration is the fabric time the incast runs (default 2 ms).
	IncastDuration clock.Duration
	// NodeGroups is deploy.Options.NodeGroups: the nodes in that many
	// processes, each group on one loop (0: a process each).
	NodeGroups int
	// ExactLinks is deploy.Options.ExactLinks: frames between nodes carry
	// their sender's lateness, and the node loops run ahead.
	ExactLinks bool
	// SocketLinks is deploy.Options.SocketLinks: links inside a node
	// group carry their frames through their veths, not in memory.
	SocketLinks bool
}

// deployOptions is what deploy is asked for s's lab at scale k (0:
// auto).
func (s *Setup) deployOptions(k int) deploy.Options {
	return deploy.Options{Topology: s.Topology, LabName: s.LabName, Root: s.Root, Binary: s.Binary, Scale: k,
		NodeGroups: s.NodeGroups, ExactLinks: s.ExactLinks, SocketLinks: s.SocketLinks}
}

// defaults fills in s's defaults, name being the default lab name.
func (s *Setup) defaults(name string) error {
	if s.Topology == nil {
		t, err := topologies.Builtin(topologies.DefaultTopology)
		if err != nil {
			return err
		}
		s.Topology = t
	}
	if s.LabName == "" {
		s.LabName = name
	}
	if s.IncastSenders <= 0 {
		s.IncastSenders = 4
	}
	if s.IncastDuration <= 0 {
		s.IncastDuration = 2 * clock.Millisecond
	}
	return nil
}

// Options configure a demo run. Zero values take the defaults named.
type Options struct {
	Setup
	// Scale is the scale factor k (0: auto).
	Scale int
	// Sizes of the all-reduce (default 1 MiB, 4 MiB).
	Sizes []int64
	// Out receives the story; Log receives progress lines.
	Out, Log io.Writer
}

// Result holds the numbers the story tells.
type Result struct {
	Lab       *deploy.Lab
	AllReduce []collective.Result
	Incast    Incast
	Deploy    time.Duration
	Total     time.Duration
}

// Incast is what one incast did to the fabric.
type Incast struct {
	Receiver   string
	PerSender  map[string]float64 // goodput Gb/s
	TotalGbps  float64
	PFCFrames  float64 // PFC frames the switches sent
	PausedTime clock.Duration
	ECNMarks   float64
	Drops      float64
	// LosslessDrops are the drops on the switches' lossless classes.
	LosslessDrops float64
	PeakQueue     float64 // bytes
	PeakQueueAt   string  // switch:port
	WrongBytes    int64
	ReceiverRate  clock.Rate
}

func (o *Options) defaults() error {
	if err := o.Setup.defaults("demo"); err != nil {
		return err
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int64{1 << 20, 4 << 20}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Run deploys, runs the tour and destroys the lab (also on failure).
func Run(ctx context.Context, opts Options) (res *Result, err error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	start := time.Now()
	res = &Result{}
	say := func(format string, a ...any) { fmt.Fprintf(opts.Out, format+"\n", a...) }
	logf := func(format string, a ...any) { fmt.Fprintf(opts.Log, "# "+format+"\n", a...) }

	logf("deploying %s as lab %q …", opts.Topology.Name, opts.LabName)
	lab, err := deploy.Deploy(ctx, opts.deployOptions(opts.Scale))
	if err != nil {
		return nil, fmt.Errorf("demo: deploy: %w", err)
	}
	res.Lab, res.Deploy = lab, time.Since(start)
	defer func() {
		logf("destroying lab %q …", lab.Name)
		// A fresh context: the lab must go even when ctx was cancelled.
		if _, derr := deploy.Destroy(context.Background(), opts.Root, lab.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("demo: destroy: %w", derr))
		}
		res.Total = time.Since(start)
	}()
	sum := opts.Topology.Summary()
	procs := "each switch and host a rocelab process"
	switch {
	case opts.deployOptions(0).OneLoop():
		procs = "the switches and hosts one rocelab process, their models on one event loop, the links between them in memory"
	case opts.NodeGroups == 1:
		procs = "the switches and hosts one rocelab process, their models on one event loop"
	case opts.NodeGroups > 1:
		procs = fmt.Sprintf("the switches and hosts in %d rocelab processes", opts.NodeGroups)
	}
	say("Deployed %s in %.1fs: %d hosts with %d GPU NICs, %d switches, %d links — each node a network namespace, %s; time dilated %d× (1 ms of wall clock = %v of fabric time).",
		opts.Topology.Name, res.Deploy.Seconds(), sum.Hosts, sum.GPUs, sum.Switches, sum.Links, procs, lab.Scale,
		clock.Duration(int64(clock.Millisecond)/int64(lab.Scale)))

	if lab.ScaleBasis != "" {
		say("Scale %d from %s.", lab.Scale, lab.ScaleBasis)
	}

	nics, clients, err := labNICs(lab)
	if err != nil {
		return res, err
	}
	defer clients.Close()

	// 1. All-reduce across every GPU NIC.
	logf("all-reduce across %d GPU NICs …", len(nics))
	res.AllReduce, err = jobs.RunCollective(ctx, jobs.CollectiveSpec{
		Op: "allreduce", Ranks: nics, Sizes: opts.Sizes, Iters: 3, Warmup: 1, Check: true,
	}, func(r collective.Result) { logf("  %d B: busbw %.1f GB/s", r.Size, r.BusBW) })
	if err != nil {
		return res, fmt.Errorf("demo: all-reduce: %w", err)
	}
	say("")
	say("1. Ring all-reduce across all %d GPU NICs (nccl-tests terms, real units):", len(nics))
	var table strings.Builder
	collective.WriteTable(&table, res.AllReduce)
	for _, line := range strings.Split(strings.TrimRight(table.String(), "\n"), "\n") {
		say("   %s", line)
	}
	best := res.AllReduce[len(res.AllReduce)-1]
	rate := opts.Topology.Node(nodeOf(nics[0].NIC)).Port(portOf(nics[0].NIC)).Rate
	say("   busbw %.1f GB/s is %.0f%% of the %v NIC line rate (%.1f GB/s); every element of the reduced data was checked: %d wrong.",
		best.BusBW, 100*best.BusBW/(float64(rate)/8e9), rate, float64(rate)/8e9, best.Wrong)

	// 2. Incast into one NIC.
	in, err := runIncast(ctx, opts, nics, clients, lab, logf)
	res.Incast = in
	if err != nil {
		return res, err
	}
	say("")
	say("2. Incast: %d NICs write into %s at once for %v of fabric time.", len(in.PerSender), in.Receiver, opts.IncastDuration)
	senders := make([]string, 0, len(in.PerSender))
	for s := range in.PerSender {
		senders = append(senders, s)
	}
	sort.Strings(senders)
	for _, s := range senders {
		say("   %-12s → %.1f Gb/s", s, in.PerSender[s])
	}
	say("   Together %.1f Gb/s into a %v link: the receiver's port is the bottleneck, so its queue grows", in.TotalGbps, in.ReceiverRate)
	say("   (deepest queue %.0f KB at %s) until the switches send PFC pause frames upstream:", in.PeakQueue/1e3, in.PeakQueueAt)
	say("   %.0f PFC frames sent, priorities paused for %v in total, %.0f packets ECN-marked, %.0f dropped (%.0f on the lossless class).",
		in.PFCFrames, in.PausedTime, in.ECNMarks, in.Drops, in.LosslessDrops)
	if in.Drops == 0 {
		say("   Lossless: PFC back-pressure absorbed the burst without losing a packet; the data check found %d wrong bytes.", in.WrongBytes)
	}
	return res, nil
}

// nodeClients are the API clients of a lab's endpoint nodes, by node name.
type nodeClients map[string]*nodeapi.Client

// Close closes every client.
func (cs nodeClients) Close() {
	for _, c := range cs {
		c.Close()
	}
}

// labNICs lists every BE NIC of the lab's endpoint nodes, in node order,
// with a client of each of those nodes.
func labNICs(lab *deploy.Lab) ([]jobs.NICRef, nodeClients, error) {
	clients := nodeClients{}
	var refs []jobs.NICRef
	for _, n := range lab.Nodes {
		if n.Kind != topologies.KindHost || n.Socket == "" {
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		clients[n.Name] = c
		for _, itf := range n.Interfaces {
			port, _, _ := strings.Cut(itf, "=")
			if strings.HasPrefix(port, "gpu") {
				refs = append(refs, jobs.NICRef{Node: n.Name, NIC: n.Name + ":" + port, Client: c})
			}
		}
	}
	if len(refs) < 2 {
		clients.Close()
		return nil, nil, fmt.Errorf("demo: lab %s has %d GPU NICs, want at least 2", lab.Name, len(refs))
	}
	return refs, clients, nil
}

func nodeOf(nic string) string { n, _, _ := strings.Cut(nic, ":"); return n }
func portOf(nic string) string { _, p, _ := strings.Cut(nic, ":"); return p }

// runIncast sends from IncastSenders NICs on other hosts into the last
// NIC at once and measures the switches before and after.
func runIncast(ctx context.Context, opts Options, nics []jobs.NICRef, clients nodeClients, lab *deploy.Lab, logf func(string, ...any)) (Incast, error) {
	recv := nics[len(nics)-1]
	var senders []jobs.NICRef
	for _, n := range nics {
		if n.Node != recv.Node && len(senders) < opts.IncastSenders {
			senders = append(senders, n)
		}
	}
	in := Incast{Receiver: recv.NIC, PerSender: map[string]float64{}}
	in.ReceiverRate = opts.Topology.Node(recv.Node).Port(portOf(recv.NIC)).Rate
	before, err := switchSamples(ctx, lab)
	if err != nil {
		return in, err
	}
	logf("incast: %d senders → %s …", len(senders), recv.NIC)
	// Together is measured where the senders meet: the bytes the
	// receiver's switch port sends, on that switch's clock. A sum of the
	// senders' averages (each over its own window) read 407 Gb/s into a
	// 400G link.
	watchCtx, stopWatch := context.WithCancel(ctx)
	together := make(chan float64, 1)
	go func() { together <- watchPort(watchCtx, opts, lab, recv, opts.IncastDuration/4) }()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for _, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := jobs.RunPerf(ctx, s, recv, jobs.PerfSpec{Op: "write", Size: 64 << 10, Duration: opts.IncastDuration, QPs: 1}, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s → %s: %w", s.NIC, recv.NIC, err))
				return
			}
			in.PerSender[s.NIC] = rep.Client.BWAvg
			in.WrongBytes += rep.WrongBytes
		}()
	}
	wg.Wait()
	stopWatch()
	in.TotalGbps = <-together
	if err := errors.Join(errs...); err != nil {
		return in, fmt.Errorf("demo: incast: %w", err)
	}
	after, err := switchSamples(ctx, lab)
	if err != nil {
		return in, err
	}
	delta := func(name string) float64 { return telemetry.Sum(after, name) - telemetry.Sum(before, name) }
	in.PFCFrames = delta("switch_port_pfc_tx_frames_total")
	in.PausedTime = clock.Duration(delta("switch_queue_paused_seconds_total") * float64(clock.Second))
	in.ECNMarks = delta("switch_queue_ecn_marked_packets_total")
	in.Drops = delta("switch_drop_packets_total")
	in.LosslessDrops = losslessDrops(opts.Topology, after) - losslessDrops(opts.Topology, before)
	for _, s := range after {
		if s.Name == "switch_queue_peak_bytes" && s.Value > in.PeakQueue {
			in.PeakQueue, in.PeakQueueAt = s.Value, s.Label("node")+":"+stats.PortName(s.Label("port"))
		}
	}
	return in, nil
}

// watchPort reads the transmitted bytes of the switch port that faces the
// receiver recv every 10 ms until ctx ends, and returns the best rate in
// Gb/s over windows of at least span of that switch's fabric time: the
// receiver's link as it carried the incast, which the switch serializes at
// its line rate (0 when the port could not be read).
func watchPort(ctx context.Context, opts Options, lab *deploy.Lab, recv jobs.NICRef, span clock.Duration) float64 {
	p := opts.Topology.Node(recv.Node).Port(portOf(recv.NIC))
	if p == nil || p.Peer == nil {
		return 0
	}
	sw, idx := p.Peer.Node, -1
	for i, q := range sw.Ports {
		if q == p.Peer {
			idx = i
		}
	}
	var c *nodeapi.Client
	for _, n := range lab.Nodes {
		if n.Name == sw.Name && n.Socket != "" {
			c = nodeapi.NewClient(n.Socket)
			defer c.Close()
		}
	}
	if c == nil || idx < 0 {
		return 0
	}
	type reading struct {
		at    clock.Time
		bytes float64
	}
	var rs []reading
	read := func() {
		at, s, err := c.TelemetryAt(context.WithoutCancel(ctx), "switch_port_tx_bytes_total")
		if err == nil {
			rs = append(rs, reading{at, telemetry.Sum(s, "switch_port_tx_bytes_total", telemetry.Label{Name: "port", Value: strconv.Itoa(idx)})})
		}
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for read(); ctx.Err() == nil; {
		select {
		case <-ctx.Done():
		case <-tick.C:
			read()
		}
	}
	read()
	best := 0.0
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			if d := rs[j].at.Sub(rs[i].at); d >= span && d > 0 {
				best = max(best, (rs[j].bytes-rs[i].bytes)*8/d.Seconds()/1e9)
			}
		}
	}
	return best
}

// losslessDrops sums switch_drop_packets_total over the traffic classes
// each switch's profile makes lossless.
func losslessDrops(t *topologies.Topology, samples []telemetry.Sample) float64 {
	var sum float64
	for _, s := range samples {
		if s.Name != "switch_drop_packets_total" {
			continue
		}
		n := t.Node(s.Label("node"))
		tc, err := strconv.Atoi(s.Label("tc"))
		if n == nil || n.Profile == nil || err != nil || tc < 0 || tc >= topologies.NumTC {
			continue
		}
		if n.Profile.PFC.Lossless[tc] {
			sum += s.Value
		}
	}
	return sum
}
