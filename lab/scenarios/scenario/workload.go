package scenario

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// WorkloadKind is what a workload drives.
type WorkloadKind string

// Workload kinds.
const (
	// KindPerf is perftest-style streams (ib_write_bw and friends).
	KindPerf WorkloadKind = "perf"
	// KindCollective is an NCCL-style collective over ranks (nccl-tests).
	KindCollective WorkloadKind = "collective"
	// KindBackground is back-end background traffic: elephant flows or
	// periodic incast bursts.
	KindBackground WorkloadKind = "background"
	// KindFE is front-end traffic: a burst (a checkpoint to storage) or a
	// steady stream (data ingestion).
	KindFE WorkloadKind = "fe"
	// KindChakra is training steps from MLCommons Chakra execution traces:
	// compute, collectives and messages replayed per rank as a DAG.
	KindChakra WorkloadKind = "chakra"
)

// Workload is one resolved workload. Fields that its kind does not use are
// zero.
type Workload struct {
	Name string
	Kind WorkloadKind
	// Pos is where the workload was written.
	Pos topologies.Pos
	// Start is when it starts, from the start of the run.
	Start clock.Duration
	// Mode and CC of its QPs (default rocev2 and dcqcn).
	Mode endpoint.Mode
	CC   string

	// PerfOp (perf): write, read or send; Latency runs the _lat test.
	PerfOp  perftest.Op
	Latency bool
	// QPs (perf) per flow.
	QPs int
	// Paths is the number of paths (UDP source ports) each MetaRoCE QP
	// sprays over (perf, collective); 1 is single-path ECMP.
	Paths int

	// CollectiveOp, Ranks, Sizes (the sweep) and Warmup (collective).
	CollectiveOp collective.Op
	Ranks        []*topologies.Port
	Sizes        []int64
	Warmup       int
	// Hierarchical (op hier-allreduce) runs one all-reduce of Sizes[0] as
	// NCCL does across hosts: reduce-scatter inside each group of Group
	// consecutive ranks, all-reduce across the groups (one ring per local
	// index), all-gather inside each group. CollectiveOp is then AllReduce.
	Hierarchical bool
	Group        int
	// Zone (hier-allreduce): groups per zone, for the cross-group step in
	// two levels (simlab.HierSpec.Zone); 0 a ring per rail across all.
	// NVLink: the groups' phases off the fabric at this rate per rank.
	Zone   int
	NVLink clock.Rate

	// Pattern: perf pairs (default), permutation or all-to-all;
	// background elephant or incast; fe burst or stream.
	Pattern string
	// From and To as written, resolved; Flows pairs them (perf,
	// background, fe).
	From, To []*topologies.Port
	Flows    []Flow
	// Size: perf message size, incast and fe burst size, in bytes.
	Size int64
	// Rate of background and fe stream traffic; 0 is the line rate.
	Rate clock.Rate
	// Interval between incast bursts (background) or fe bursts (0 = once).
	Interval clock.Duration
	// Iters: perf iterations per QP, collective iterations per size, fe
	// bursts; 0 with Duration set means "for Duration".
	Iters int
	// Duration the workload lasts; 0 = until its iterations end, or until
	// the run ends (background, fe stream).
	Duration clock.Duration

	// Chakra is a chakra workload's traces; Ranks are then the NICs of its
	// ranks, in rank order, and Iters the steps it runs.
	Chakra *ChakraWorkload
}

// Flow is one sender and receiver pair.
type Flow struct {
	From, To *topologies.Port
}

// String formats f as from->to.
func (f Flow) String() string { return PortName(f.From) + "->" + PortName(f.To) }

// Ports returns every NIC port the workload uses, without repeats.
func (w *Workload) Ports() []*topologies.Port {
	seen := map[*topologies.Port]bool{}
	var out []*topologies.Port
	for _, l := range [][]*topologies.Port{w.Ranks, w.From, w.To} {
		for _, p := range l {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

var workloadKinds = []string{"perf", "collective", "background", "fe", "chakra"}

var kindKeys = map[WorkloadKind][]string{
	KindPerf:       {"op", "pattern", "from", "to", "size", "qps", "paths", "iters", "duration", "latency", "mode", "cc"},
	KindCollective: {"op", "ranks", "sizes", "iters", "warmup", "group", "zone", "nvlink", "mode", "cc", "paths"},
	KindBackground: {"pattern", "from", "to", "rate", "size", "interval", "duration", "mode", "cc"},
	KindFE:         {"pattern", "from", "to", "size", "rate", "interval", "iters", "duration", "mode", "cc"},
	KindChakra:     {"trace", "prefix", "ranks", "iters", "peak_tflops", "mem_gbps", "mode", "cc", "paths"},
}

var commonKeys = []string{"name", "kind", "start"}

var allWorkloadKeys = func() []string {
	out := append([]string(nil), commonKeys...)
	for _, k := range workloadKinds {
		for _, key := range kindKeys[WorkloadKind(k)] {
			if !contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}()

var ccNames = []string{"none", "dcqcn", "credit"}

func (r *resolver) workloads(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		r.e.add(posOf(n), "workloads: want a list, got %s", yamldoc.KindName(n))
		return
	}
	seen := map[string]bool{}
	for _, c := range n.Content {
		w := r.workload(yamldoc.Resolve(c))
		if w == nil {
			continue
		}
		if seen[w.Name] {
			r.e.add(w.Pos, "duplicate workload name %q", w.Name)
			continue
		}
		seen[w.Name] = true
		r.s.Workloads = append(r.s.Workloads, w)
	}
}

func (r *resolver) workload(n *yaml.Node) *Workload {
	e := r.e
	if n.Kind != yaml.MappingNode {
		e.add(posOf(n), "workload: want a mapping, got %s", yamldoc.KindName(n))
		return nil
	}
	w := &Workload{Pos: posOf(n), CC: "dcqcn"}
	vals := map[string]*yaml.Node{}
	keyNodes := map[string]*yaml.Node{}
	e.fields(n, "workload", allWorkloadKeys, func(k string, kn, v *yaml.Node) { vals[k], keyNodes[k] = v, kn })
	if v := vals["name"]; v != nil {
		if s, ok := e.str(v, "name"); ok {
			if !e.validName(v, "workload name", s) {
				return nil
			}
			w.Name = s
		}
	} else {
		e.add(posOf(n), "workload: missing name")
		return nil
	}
	what := fmt.Sprintf("workload %s", w.Name)
	kv := vals["kind"]
	if kv == nil {
		e.add(posOf(n), "%s: missing kind (%s)", what, strings.Join(workloadKinds, ", "))
		return nil
	}
	k, ok := e.oneOf(kv, "workload kind", workloadKinds...)
	if !ok {
		return nil
	}
	w.Kind = WorkloadKind(k)
	for key, kn := range keyNodes {
		if !contains(commonKeys, key) && !contains(kindKeys[w.Kind], key) {
			e.add(posOf(kn), "%s: key %q is not used by %s workloads (they take %s)",
				what, key, w.Kind, strings.Join(append(commonKeys[1:], kindKeys[w.Kind]...), ", "))
			delete(vals, key)
		}
	}
	if v := vals["start"]; v != nil {
		w.Start, _ = e.duration(v, "start")
		if r.s.Duration > 0 && w.Start >= r.s.Duration {
			e.add(posOf(v), "%s: starts at %s, not before the run ends (duration %s)", what, w.Start, r.s.Duration)
		}
	}
	if v := vals["mode"]; v != nil {
		if s, ok := e.oneOf(v, "mode", "rocev2", "metaroce"); ok {
			w.Mode, _ = endpoint.ParseMode(s)
		}
	}
	if v := vals["cc"]; v != nil {
		w.CC, _ = e.oneOf(v, "cc", ccNames...)
	}
	if v := vals["iters"]; v != nil {
		w.Iters, _ = e.integer(v, "iters", 1)
	}
	if v := vals["duration"]; v != nil {
		if d, ok := e.duration(v, "duration"); ok && d <= 0 {
			e.add(posOf(v), "duration: must be above 0")
		} else {
			w.Duration = d
		}
	}
	if v := vals["size"]; v != nil {
		if s, ok := e.size(v, "size"); ok && s <= 0 {
			e.add(posOf(v), "size: must be above 0")
		} else {
			w.Size = s
		}
	}
	if v := vals["rate"]; v != nil {
		w.Rate, _ = e.rate(v, "rate")
	}
	if v := vals["interval"]; v != nil {
		w.Interval, _ = e.duration(v, "interval")
	}
	switch w.Kind {
	case KindPerf:
		r.perf(w, n, vals)
	case KindCollective:
		r.collective(w, n, vals)
	case KindBackground, KindFE:
		r.traffic(w, n, vals)
	case KindChakra:
		r.chakra(w, n, vals)
	}
	return w
}

func (r *resolver) perf(w *Workload, n *yaml.Node, vals map[string]*yaml.Node) {
	e := r.e
	if v := vals["op"]; v != nil {
		if s, ok := e.oneOf(v, "perf op", "write", "read", "send"); ok {
			w.PerfOp, _ = perftest.ParseOp(s)
		}
	}
	if v := vals["latency"]; v != nil {
		w.Latency, _ = e.boolean(v, "latency")
	}
	w.QPs = 1
	if v := vals["qps"]; v != nil {
		w.QPs, _ = e.integer(v, "qps", 1)
	}
	r.paths(w, vals)
	if w.Size == 0 {
		w.Size = perftest.DefaultSize
	}
	if vals["iters"] != nil && vals["duration"] != nil {
		e.add(posOf(vals["duration"]), "workload %s: give iters or duration, not both", w.Name)
	}
	if vals["iters"] == nil && vals["duration"] == nil {
		w.Iters = perftest.DefaultIterations
	}
	w.Pattern = PatternPairs
	if v := vals["pattern"]; v != nil {
		p, ok := e.oneOf(v, "perf pattern", perfPatterns...)
		if !ok {
			return
		}
		w.Pattern = p
	}
	if w.Pattern == PatternPairs {
		r.flows(w, n, vals, topologies.BE)
		return
	}
	r.patternFlows(w, n, vals)
}

// paths reads paths: only MetaRoCE QPs spray.
func (r *resolver) paths(w *Workload, vals map[string]*yaml.Node) {
	w.Paths = 1
	v := vals["paths"]
	if v == nil {
		return
	}
	if p, ok := r.e.integer(v, "paths", 1); ok {
		w.Paths = p
		if p > 1 && w.Mode != endpoint.ModeMetaRoCE {
			r.e.add(posOf(v), "workload %s: paths %d needs mode: metaroce (RoCEv2 QPs keep one path)", w.Name, p)
		}
		if p > 256 {
			r.e.add(posOf(v), "paths: %d is above the maximum 256", p)
		}
	}
}

// collectiveOps are the collective operations a workload may name.
var collectiveOps = []string{"allreduce", "allgather", "reducescatter", "alltoall", "hier-allreduce"}

func (r *resolver) collective(w *Workload, n *yaml.Node, vals map[string]*yaml.Node) {
	e := r.e
	if v := vals["op"]; v != nil {
		if s, ok := e.oneOf(v, "collective op", collectiveOps...); ok {
			if s == "hier-allreduce" {
				s, w.Hierarchical = "allreduce", true
			}
			w.CollectiveOp, _ = collective.ParseOp(s)
		}
	} else {
		e.add(posOf(n), "workload %s: missing op (%s)", w.Name, strings.Join(collectiveOps, ", "))
	}
	r.paths(w, vals)
	if v := vals["ranks"]; v != nil {
		w.Ranks = r.endpoints(v, "ranks", topologies.BE)
		if len(w.Ranks) == 1 {
			e.add(posOf(v), "ranks: a collective needs at least 2 ranks, got %s", PortName(w.Ranks[0]))
		}
	} else {
		e.add(posOf(n), "workload %s: missing ranks (e.g. \"host[1-4]:gpu[0-1]\")", w.Name)
	}
	if v := vals["sizes"]; v != nil {
		// nccl-tests conventions: MIN:MAX doubling, powers of two (1MB = 1MiB).
		w.Sizes, _ = scalar(e, v, "sizes", collective.ParseSizes)
	} else {
		e.add(posOf(n), "workload %s: missing sizes (e.g. 1MB:64MB, or 4MB)", w.Name)
	}
	if w.Hierarchical {
		r.hier(w, vals)
		return
	}
	for _, k := range []string{"group", "zone", "nvlink"} {
		if v := vals[k]; v != nil {
			e.add(posOf(v), "workload %s: %s is for op hier-allreduce", w.Name, k)
		}
	}
	if w.Iters == 0 {
		w.Iters = 20
	}
	w.Warmup = 5
	if v := vals["warmup"]; v != nil {
		w.Warmup, _ = e.integer(v, "warmup", 0)
	}
}

// hier checks a hierarchical all-reduce: one size, run once, over groups
// of Group consecutive ranks (default: the ranks of the first rank's
// host, as NCCL groups a host's GPUs).
func (r *resolver) hier(w *Workload, vals map[string]*yaml.Node) {
	e := r.e
	for _, k := range []string{"iters", "warmup"} {
		if v := vals[k]; v != nil {
			e.add(posOf(v), "workload %s: hier-allreduce runs once; it takes no %s", w.Name, k)
		}
	}
	w.Iters, w.Warmup = 1, 0
	if v := vals["sizes"]; v != nil && len(w.Sizes) > 1 {
		e.add(posOf(v), "workload %s: hier-allreduce runs one size, got %d", w.Name, len(w.Sizes))
	}
	if len(w.Ranks) < 2 {
		return
	}
	if v := vals["group"]; v != nil {
		w.Group, _ = e.integer(v, "group", 2)
	} else {
		for _, p := range w.Ranks {
			if p.Node != w.Ranks[0].Node {
				break
			}
			w.Group++
		}
		if w.Group < 2 {
			e.add(posOf(vals["ranks"]), "workload %s: %s has one rank, so hier-allreduce needs group: (ranks per group, at least 2)", w.Name, w.Ranks[0].Node.Name)
			w.Group = 0
		}
	}
	at := posOf(vals["ranks"])
	if vals["group"] != nil {
		at = posOf(vals["group"])
	}
	if n := len(w.Ranks); w.Group > 0 && (n%w.Group != 0 || n/w.Group < 2) {
		e.add(at, "workload %s: %d ranks are not at least two groups of %d", w.Name, n, w.Group)
	}
	if v := vals["nvlink"]; v != nil {
		w.NVLink, _ = e.rate(v, "nvlink")
	}
	unit := w.Group
	if v := vals["zone"]; v != nil {
		w.Zone, _ = e.integer(v, "zone", 2)
		if n, g := len(w.Ranks), w.Group; g > 0 && w.Zone > 1 && (n%(g*w.Zone) != 0 || n/(g*w.Zone) < 2) {
			e.add(posOf(v), "workload %s: %d ranks are not at least two zones of %d groups of %d", w.Name, n, w.Zone, g)
		}
		unit *= max(w.Zone, 1)
	}
	if len(w.Sizes) == 1 && unit > 0 && w.Sizes[0] < int64(4*unit) {
		e.add(posOf(vals["sizes"]), "workload %s: size %d is below %d bytes (4 per rank of a group)", w.Name, w.Sizes[0], 4*unit)
	}
}

func (r *resolver) traffic(w *Workload, n *yaml.Node, vals map[string]*yaml.Node) {
	e := r.e
	plane, patterns := topologies.BE, []string{"elephant", "incast"}
	if w.Kind == KindFE {
		plane, patterns = topologies.FE, []string{"burst", "stream"}
	}
	if v := vals["pattern"]; v != nil {
		w.Pattern, _ = e.oneOf(v, fmt.Sprintf("%s pattern", w.Kind), patterns...)
	} else {
		e.add(posOf(n), "workload %s: missing pattern (%s)", w.Name, strings.Join(patterns, ", "))
	}
	need := func(key, why string) {
		if vals[key] == nil {
			e.add(posOf(n), "workload %s: %s traffic needs %s (%s)", w.Name, w.Pattern, key, why)
		}
	}
	refuse := func(key string) {
		if v := vals[key]; v != nil {
			e.add(posOf(v), "workload %s: %s traffic takes no %s", w.Name, w.Pattern, key)
		}
	}
	switch w.Pattern {
	case "elephant", "stream":
		refuse("size")
		refuse("interval")
		refuse("iters")
	case "incast":
		need("size", "the bytes each sender writes per burst")
		need("interval", "the time between bursts")
	case "burst":
		need("size", "the bytes each sender writes")
		refuse("rate")
		if vals["iters"] != nil && vals["interval"] == nil {
			e.add(posOf(vals["iters"]), "workload %s: several bursts need an interval", w.Name)
		}
		if w.Iters == 0 {
			w.Iters = 1
		}
	}
	r.flows(w, n, vals, plane)
}

// flows resolves from and to and pairs them: many to one, one to many,
// or one to one in order.
func (r *resolver) flows(w *Workload, n *yaml.Node, vals map[string]*yaml.Node, plane topologies.Plane) {
	fv, tv := vals["from"], vals["to"]
	if fv == nil || tv == nil {
		r.e.add(posOf(n), "workload %s: needs from and to", w.Name)
		return
	}
	w.From = r.endpoints(fv, "from", plane)
	w.To = r.endpoints(tv, "to", plane)
	nf, nt := len(w.From), len(w.To)
	if nf == 0 || nt == 0 {
		return
	}
	switch {
	case nt == 1:
		for _, f := range w.From {
			w.Flows = append(w.Flows, Flow{f, w.To[0]})
		}
	case nf == 1:
		for _, t := range w.To {
			w.Flows = append(w.Flows, Flow{w.From[0], t})
		}
	case nf == nt:
		for i := range w.From {
			w.Flows = append(w.Flows, Flow{w.From[i], w.To[i]})
		}
	default:
		r.e.add(posOf(tv), "to: %d endpoints for %d senders; want one, or as many as from", nt, nf)
		return
	}
	for _, f := range w.Flows {
		if f.From == f.To {
			r.e.add(posOf(tv), "to: %s sends to itself", PortName(f.From))
			return
		}
	}
}
