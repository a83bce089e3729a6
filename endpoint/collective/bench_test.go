package collective

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// BenchmarkAllReducePayloadFree: one 256 MiB all-reduce on 8 ranks at
// 400G, payload-free (the scale mode): wall time per collective.
func BenchmarkAllReducePayloadFree(b *testing.B) {
	eng := sim.New(1)
	comm, err := New(eng, NewIdeal(eng, 8, 400*clock.Gbps, clock.Microsecond), Config{Ranks: 8})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		comm.Run(AllReduce, 256<<20, 0, 1, func(_ Result, err error) {
			if err != nil {
				b.Fatal(err)
			}
		})
		eng.Run()
	}
}

// BenchmarkAllReduceChecked: 4 MiB on 8 ranks with real data and the check.
func BenchmarkAllReduceChecked(b *testing.B) {
	eng := sim.New(1)
	comm, err := New(eng, NewIdeal(eng, 8, 400*clock.Gbps, clock.Microsecond), Config{Ranks: 8, Check: true, SliceBytes: 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		comm.Run(AllReduce, 4<<20, 0, 1, func(r Result, err error) {
			if err != nil || r.Wrong != 0 {
				b.Fatal(err, r.Wrong)
			}
		})
		eng.Run()
	}
}
