// Package hierplan plans NCCL's hierarchical all-reduce as a sequence of
// ring phases, for any driver that runs rings (the packet simulator's
// collective engine, the flow-level mode's): a reduce-scatter inside each
// group of GroupSize consecutive ranks (a host), then, level by level, a
// reduce-scatter among consecutive units of the level below (racks of
// hosts, zones of racks: Levels), an all-reduce across the outermost
// units, and the all-gathers back in reverse order — each a ring per
// rank position over Size divided by the levels below it. With NVLink
// the groups' phases run off the fabric, as timed ring steps.
//
// It plans only: which ranks form each ring, on what size, for how long
// an NVLink step waits; and it turns the phases' times into the result
// nccl-tests would print. It imports nothing that runs.
package hierplan

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// Spec is a hierarchical all-reduce's shape.
type Spec struct {
	// GroupSize is the ranks per group (default 8).
	GroupSize int
	// Levels are the sizes of the levels above the groups, innermost
	// first (each at least 2): [4, 96] is racks of 4 groups, zones of 96
	// racks. None: one ring per rail across every group.
	Levels []int
	// NVLink, if set, is each rank's rate inside its group: the groups'
	// reduce-scatter and all-gather are GroupSize−1 steps of
	// Size/GroupSize bytes at that rate, each after NVLinkLatency
	// (default 1 µs), off the fabric.
	NVLink        clock.Rate
	NVLinkLatency clock.Duration
	// Size is the all-reduce size in nccl-tests bytes (default 64 MiB);
	// Check rounds it down to a multiple of 4 × GroupSize × Levels.
	Size int64
}

// Check fills in s's defaults and checks it against n ranks: at least two
// units of the outermost level, and a size of at least 4 bytes a rank of
// a unit. name labels its errors.
func (s *Spec) Check(name string, n int) error {
	if s.GroupSize <= 0 {
		s.GroupSize = 8
	}
	if s.NVLink > 0 && s.NVLinkLatency <= 0 {
		s.NVLinkLatency = clock.Microsecond
	}
	if s.Size <= 0 {
		s.Size = 64 << 20
	}
	g := s.GroupSize
	if n%g != 0 || n/g < 2 {
		return fmt.Errorf("hierarchical %s: %d ranks are not at least two groups of %d", name, n, g)
	}
	span := g
	for _, z := range s.Levels {
		if z < 2 {
			return fmt.Errorf("hierarchical %s: level of %d: want at least 2", name, z)
		}
		span *= z
	}
	if n%span != 0 || n/span < 2 {
		return fmt.Errorf("hierarchical %s: %d ranks are not at least two units of %d (groups of %d, levels %v)", name, n, span, g, s.Levels)
	}
	unit := int64(4 * span)
	s.Size = s.Size / unit * unit
	if s.Size == 0 {
		return fmt.Errorf("hierarchical %s: size below %d bytes", name, unit)
	}
	return nil
}

// Bucket is the part of the result a phase counts in.
type Bucket int

// Buckets.
const (
	ReduceScatter Bucket = iota
	AllReduce
	AllGather
)

// Phase is one step of the plan: a collective of Size bytes on each of
// Rings (rank indices, in ring order), all at once; or, with Rings nil,
// an NVLink step that takes Wait.
type Phase struct {
	Rings  [][]int
	Op     collective.Op
	Size   int64
	Wait   clock.Duration
	Bucket Bucket
	// Level names the rings' level for errors: "group", "level 1", …,
	// "rail".
	Level string
}

// Plan returns the phases of s (Checked) over n ranks, in order. Phases
// that share a level share one Rings slice: a driver connects each ring
// once (the reduce-scatter's ring is the all-gather's).
func Plan(s Spec, n int) []Phase {
	g, size := s.GroupSize, s.Size
	var down, up []Phase
	if s.NVLink > 0 {
		step := s.NVLinkLatency + s.NVLink.Serialize(int(size/int64(g)))
		wait := clock.Duration(g-1) * step
		down = append(down, Phase{Wait: wait, Bucket: ReduceScatter, Level: "group"})
		up = append(up, Phase{Wait: wait, Bucket: AllGather, Level: "group"})
	} else {
		rings := Rings(n, 1, g)
		down = append(down, Phase{Rings: rings, Op: collective.ReduceScatter, Size: size, Bucket: ReduceScatter, Level: "group"})
		up = append(up, Phase{Rings: rings, Op: collective.AllGather, Size: size, Bucket: AllGather, Level: "group"})
	}
	size /= int64(g)
	stride := g
	for i, z := range s.Levels {
		rings, level := Rings(n, stride, z), "level "+strconv.Itoa(i+1)
		down = append(down, Phase{Rings: rings, Op: collective.ReduceScatter, Size: size, Bucket: ReduceScatter, Level: level})
		up = append(up, Phase{Rings: rings, Op: collective.AllGather, Size: size, Bucket: AllGather, Level: level})
		size /= int64(z)
		stride *= z
	}
	phases := append(down, Phase{Rings: Rings(n, stride, n/stride), Op: collective.AllReduce, Size: size, Bucket: AllReduce, Level: "rail"})
	for i := len(up) - 1; i >= 0; i-- {
		phases = append(phases, up[i])
	}
	return phases
}

// Rings returns the rings of size members among n ranks that differ only
// in their index at stride: base, base+stride, … for every base whose
// index at stride is 0, in order of base.
func Rings(n, stride, size int) [][]int {
	var rings [][]int
	for base := 0; base < n; base++ {
		if (base/stride)%size != 0 {
			continue
		}
		ring := make([]int, size)
		for k := range size {
			ring[k] = base + k*stride
		}
		rings = append(rings, ring)
	}
	return rings
}

// Result is what a hierarchical all-reduce measured.
type Result struct {
	Ranks, GroupSize int
	// Levels are the sizes of the levels above the groups (Spec).
	Levels []int
	Size   int64
	// Phases are the fabric times of the reduce-scatters, the all-reduce
	// across the outermost units and the all-gathers (by Bucket).
	Phases [3]clock.Duration
	Time   clock.Duration
	// AlgBW and BusBW in GB/s, as nccl-tests computes them for an
	// all-reduce of Size over Ranks.
	AlgBW, BusBW float64
}

// NewResult is the result of s over n ranks that took spent in each
// bucket, Time their sum.
func NewResult(s Spec, n int, spent [3]clock.Duration) Result {
	r := Result{Ranks: n, GroupSize: s.GroupSize, Levels: s.Levels, Size: s.Size, Phases: spent, Time: spent[0] + spent[1] + spent[2]}
	r.AlgBW = float64(r.Size) / r.Time.Seconds() / 1e9
	r.BusBW = r.AlgBW * 2 * float64(n-1) / float64(n)
	return r
}

// NCCL returns r as one nccl-tests line (none for a zero result).
func (r Result) NCCL() []collective.Result {
	if r.Time == 0 {
		return nil
	}
	return []collective.Result{{Op: "hier_all_reduce", Ranks: r.Ranks, Size: r.Size, Count: r.Size / 4, Type: "float", RedOp: "sum",
		TimeUs: r.Time.Micros(), AlgBW: r.AlgBW, BusBW: r.BusBW}}
}

// Collect emits r's busbw, algbw and time (none for a zero result),
// labelled job, op and size.
func (r Result) Collect(job string, emit func(telemetry.Sample)) {
	if r.Time == 0 {
		return
	}
	l := []telemetry.Label{{Name: "job", Value: job}, {Name: "op", Value: "hier_all_reduce"}, {Name: "size", Value: strconv.FormatInt(r.Size, 10)}}
	emit(telemetry.Sample{Name: "collective_busbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.BusBW * 1e9})
	emit(telemetry.Sample{Name: "collective_algbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.AlgBW * 1e9})
	emit(telemetry.Sample{Name: "collective_time_seconds", Kind: telemetry.Gauge, Labels: l, Value: r.Time.Seconds()})
}
