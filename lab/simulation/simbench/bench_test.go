package simbench

import (
	"testing"
)

// BenchmarkPermutation64 is the 64-host permutation of 256 KiB flows
// (single-path ECMP); one op is one whole run, and the data packets per
// second of simulation are reported. `make bench-sim` runs the full-size
// version.
func BenchmarkPermutation64(b *testing.B) {
	var pkts int64
	var wall float64
	for b.Loop() {
		r, err := Permutation(small64(), Config{Seed: 1, FlowBytes: 256 << 10})
		if err != nil {
			b.Fatal(err)
		}
		pkts += r.DataPackets
		wall += r.Wall.Seconds()
	}
	b.ReportMetric(float64(pkts)/wall, "pkts/s")
}
