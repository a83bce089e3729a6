package emu_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
)

func TestAutoScale(t *testing.T) {
	for _, c := range []struct {
		name      string
		aggregate clock.Rate
		frame     int
		capacity  float64
		want      int
	}{
		// 8 × 400G of 4096-byte frames: 3.2e12 / (8 × 4120) = 97.09M pps.
		{"8x400G at 500k pps", 8 * 400 * clock.Gbps, 4096, 500_000, 195},
		{"exact fit", 8 * 4120 * 1000 * clock.BitPerSecond, 4096, 1000, 1},
		{"just over", 8*4120*1000*clock.BitPerSecond + 1, 4096, 1000, 2},
		{"fits easily", clock.Gbps, 1500, 1e6, 1},
		{"small frames cost more", 100 * clock.Gbps, 64, 1e6, 143}, // 1e11 / (8 × 88) = 142.05M pps,
		{"no traffic", 0, 1000, 1e6, 1},
		{"no capacity", clock.Gbps, 1000, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := emu.AutoScale(c.aggregate, c.frame, c.capacity); got != c.want {
				t.Errorf("AutoScale(%v, %d, %g) = %d, want %d", c.aggregate, c.frame, c.capacity, got, c.want)
			}
		})
	}
}
