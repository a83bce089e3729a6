package node

import (
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
)

// procStats is the node process's own cost, as telemetry: the CPU time
// of every thread (the loop, the API, the garbage collector) by mode, and
// the collector's cycles, and its goroutines (one node per process: a
// soak watches them for leaks). With the loop's frame counters it gives the CPU
// a node spends per forwarded frame (docs/performance.md).
type procStats struct{ name string }

// Collect emits node_cpu_seconds_total{mode=user|system},
// node_gc_cycles_total, node_heap_live_bytes and node_goroutines.
func (p procStats) Collect(emit func(telemetry.Sample)) {
	node := []telemetry.Label{{Name: "node", Value: p.name}}
	if user, sys, ok := processCPU(); ok {
		for _, m := range []struct {
			mode string
			d    time.Duration
		}{{"user", user}, {"system", sys}} {
			emit(telemetry.Sample{Name: "node_cpu_seconds_total", Kind: telemetry.Counter,
				Labels: telemetry.With(node, telemetry.Label{Name: "mode", Value: m.mode}), Value: m.d.Seconds()})
		}
	}
	gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(gc)
	if gc[0].Value.Kind() == metrics.KindUint64 {
		emit(telemetry.Sample{Name: "node_gc_cycles_total", Kind: telemetry.Counter, Labels: node, Value: float64(gc[0].Value.Uint64())})
	}
	if gc[1].Value.Kind() == metrics.KindUint64 {
		// The heap the last GC found live: what a leak grows (RSS also
		// keeps the pages of the biggest burst so far).
		emit(telemetry.Sample{Name: "node_heap_live_bytes", Kind: telemetry.Gauge, Labels: node, Value: float64(gc[1].Value.Uint64())})
	}
	emit(telemetry.Sample{Name: "node_goroutines", Kind: telemetry.Gauge, Labels: node, Value: float64(runtime.NumGoroutine())})
}
