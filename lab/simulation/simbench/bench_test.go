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

// BenchmarkBuildFatTree1024 builds the 1,024-host fabric of `make
// bench-sim`'s permutation (264 switches, 1.4 million routes) and its NICs;
// one op is one lab.
func BenchmarkBuildFatTree1024(b *testing.B) {
	for b.Loop() {
		if _, _, err := build(FatTree1024(), Config{Seed: 1, Mode: "rocev2", CC: "none", QPWindow: 512}); err != nil {
			b.Fatal(err)
		}
	}
}
