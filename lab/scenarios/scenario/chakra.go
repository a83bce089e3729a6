package scenario

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// ChakraWorkload is a chakra workload's trace: MLCommons Chakra execution
// traces, one file per rank (PREFIX.RANK.et in Dir).
type ChakraWorkload struct {
	// Dir is the trace folder as written (relative to the scenario), Path
	// where it was read from.
	Dir, Path string
	// Prefix is the files' PREFIX.
	Prefix string
	// Traces are the ranks' traces, by rank.
	Traces []*chakra.Trace
	// Roofline, if set (peak_tflops, mem_gbps), times GPU compute nodes
	// from their num_ops and tensor_size, as ASTRA-sim's roofline does,
	// instead of by duration_micros.
	Roofline *chakra.Roofline
}

// maxTraceErrors bounds the trace problems a scenario's errors list.
const maxTraceErrors = 20

// chakra resolves a chakra workload: trace (a folder, relative to the
// scenario), prefix (when the folder holds several), ranks (the NIC of
// each rank, in rank order; default the topology's first back-end NICs),
// iters (steps, back to back; default 1), peak_tflops and mem_gbps (a
// roofline for compute nodes, ASTRA-sim's peak-perf and local-mem-bw).
func (r *resolver) chakra(w *Workload, n *yaml.Node, vals map[string]*yaml.Node) {
	e := r.e
	r.paths(w, vals)
	if w.Iters == 0 {
		w.Iters = 1
	}
	v := vals["trace"]
	if v == nil {
		e.add(posOf(n), "workload %s: missing trace (the folder of its Chakra files, PREFIX.RANK.et)", w.Name)
		return
	}
	dir, ok := e.str(v, "trace")
	if !ok {
		return
	}
	c := &ChakraWorkload{Dir: dir, Path: dir}
	if !filepath.IsAbs(dir) {
		c.Path = filepath.Join(filepath.Dir(e.file), dir)
	}
	if st, err := os.Stat(c.Path); err != nil || !st.IsDir() {
		e.add(posOf(v), "trace: no folder %s", c.Path)
		return
	}
	if pv := vals["prefix"]; pv != nil {
		c.Prefix, _ = e.str(pv, "prefix")
	}
	traces, err := chakra.LoadDir(c.Path, c.Prefix)
	if err == nil {
		err = simlab.ChakraSupported(traces)
	}
	var el chakra.ErrorList
	switch {
	case errors.As(err, &el):
		e.add(posOf(v), "workload %s: trace %s does not validate (%d problem%s, below)", w.Name, dir, len(el), plural(len(el)))
		for i, te := range el {
			if i == maxTraceErrors {
				e.add(posOf(v), "  … and %d more (rocelab validate --chakra %s lists them all)", len(el)-i, c.Path)
				break
			}
			e.add(posOf(v), "  %v", te)
		}
		return
	case err != nil:
		e.add(posOf(v), "trace: %v", err)
		return
	}
	if c.Prefix == "" {
		c.Prefix, _ = chakra.OnlyPrefix(c.Path)
	}
	c.Traces = traces
	w.Chakra = c
	if pv := vals["peak_tflops"]; pv != nil {
		if f, ok := e.positive(pv, "peak_tflops"); ok {
			c.Roofline = &chakra.Roofline{PeakOpsPerSec: f * 1e12}
		}
	}
	if mv := vals["mem_gbps"]; mv != nil {
		f, ok := e.positive(mv, "mem_gbps")
		switch {
		case ok && c.Roofline == nil:
			e.add(posOf(mv), "workload %s: mem_gbps needs peak_tflops (the roofline's peak)", w.Name)
		case ok:
			c.Roofline.MemBytesPerSec = f * 1e9
		}
	}
	if rv := vals["ranks"]; rv != nil {
		w.Ranks = r.endpoints(rv, "ranks", topologies.BE)
		if len(w.Ranks) > 0 && len(w.Ranks) != len(traces) {
			e.add(posOf(rv), "ranks: %d NICs for the %d ranks of trace %s; give one NIC per rank", len(w.Ranks), len(traces), dir)
		}
		return
	}
	nics := r.backEndNICs()
	if len(nics) < len(traces) {
		e.add(posOf(v), "workload %s: trace %s has %d ranks, the topology %d back-end NICs", w.Name, dir, len(traces), len(nics))
		return
	}
	w.Ranks = nics[:len(traces)]
}

// positive reads a number above 0.
func (e *errs) positive(n *yaml.Node, what string) (float64, bool) {
	f, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || !(f > 0) || math.IsInf(f, 0) {
		e.add(posOf(n), "%s: want a number above 0, got %q", what, n.Value)
		return 0, false
	}
	return f, true
}

// backEndNICs returns the topology's back-end NIC ports in node order.
func (r *resolver) backEndNICs() []*topologies.Port {
	var out []*topologies.Port
	for _, nd := range r.t.Nodes {
		for _, p := range nd.Ports {
			if p.Plane == topologies.BE && nd.Kind == topologies.KindHost {
				out = append(out, p)
			}
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
