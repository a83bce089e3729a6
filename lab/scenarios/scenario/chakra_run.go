package scenario

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/workloads/chakra"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// ChakraRun is what rocelab run --chakra runs: a scenario of one chakra
// workload, built from flags instead of a file.
type ChakraRun struct {
	Dir, Prefix string
	// Topology is a built-in name or a file path (default laptop).
	Topology string
	// Ranks is the NIC of each rank, as a scenario's ranks: (default the
	// topology's first back-end NICs).
	Ranks string
	// Iters, PeakTFLOPS and MemGBps as the workload's keys (0: unset).
	Iters               int
	PeakTFLOPS, MemGBps float64
	// Duration of the run; 0 picks one (ChakraDuration).
	Duration clock.Duration
}

// flagFile names the scenario text ChakraScenario writes.
const flagFile = "--chakra"

// ChakraScenario resolves r as the scenario file it stands for (errors
// name the flag, or the trace's file and node).
func ChakraScenario(r ChakraRun) (*Scenario, error) {
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("--chakra %s: %w", r.Dir, err)
	}
	var b strings.Builder
	name := "chakra-" + strings.Map(func(c rune) rune {
		if strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", c) {
			return c
		}
		return '-'
	}, filepath.Base(dir))
	fmt.Fprintf(&b, "name: %s\n", name)
	if r.Topology != "" {
		fmt.Fprintf(&b, "topology: %s\n", strconv.Quote(r.Topology))
	}
	b.WriteString("duration: 1s\nworkloads:\n  - name: step\n    kind: chakra\n")
	fmt.Fprintf(&b, "    trace: %s\n", strconv.Quote(dir))
	if r.Prefix != "" {
		fmt.Fprintf(&b, "    prefix: %s\n", strconv.Quote(r.Prefix))
	}
	if r.Ranks != "" {
		fmt.Fprintf(&b, "    ranks: %s\n", strconv.Quote(r.Ranks))
	}
	if r.Iters > 0 {
		fmt.Fprintf(&b, "    iters: %d\n", r.Iters)
	}
	if r.PeakTFLOPS != 0 {
		fmt.Fprintf(&b, "    peak_tflops: %g\n", r.PeakTFLOPS)
	}
	if r.MemGBps != 0 {
		fmt.Fprintf(&b, "    mem_gbps: %g\n", r.MemGBps)
	}
	s, err := Parse(flagFile, []byte(b.String()))
	var el topologies.ErrorList
	if errors.As(err, &el) {
		// The text is ours: name the flags, not its lines.
		for _, e := range el {
			if e.File == flagFile {
				e.File, e.Pos = "--chakra "+r.Dir, topologies.Pos{}
			}
		}
		return nil, el
	}
	if err != nil {
		return nil, err
	}
	s.Source = dir
	s.Duration = r.Duration
	if s.Duration <= 0 {
		s.Duration = ChakraDuration(s.Workloads[0])
	}
	return s, nil
}

// ChakraDuration is a run long enough for w's steps: three times what they
// take on an ideal fabric (every collective a ring at its first NIC's line
// rate, no congestion), and at least 1 ms.
func ChakraDuration(w *Workload) clock.Duration {
	rate := w.Ranks[0].Rate
	bytesPerSec := float64(rate) / 8
	if rate <= 0 {
		bytesPerSec = 400e9 / 8
	}
	const hop = 5 * clock.Microsecond // per ring step: latency and setup
	eng := sim.New(1)
	cost := func(kind chakra.Kind, typ etpb.CollectiveCommType, size int64, n int) clock.Duration {
		f := 1.0
		steps := 1
		if kind == chakra.Coll {
			_, size, _ = simlab.ChakraOp(typ, size, n)
			f, steps = float64(n-1)/float64(n), n-1
			if typ == etpb.CollectiveCommType_ALL_REDUCE {
				f, steps = 2*f, 2*(n-1)
			}
		}
		return clock.Duration(f*float64(size)/bytesPerSec*float64(clock.Second)) + clock.Duration(steps)*hop
	}
	r, err := chakra.Start(w.Chakra.Traces, chakra.Options{Sched: eng, Comm: &chakra.IdealComm{Sched: eng, Cost: cost}, Roofline: w.Chakra.Roofline})
	if err != nil {
		return clock.Millisecond
	}
	eng.Run()
	res, err := r.Result()
	if err != nil {
		return clock.Millisecond
	}
	return max(clock.Millisecond, 3*res.Iteration*clock.Duration(max(w.Iters, 1)))
}
