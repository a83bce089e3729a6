package emu

import (
	"math"

	"github.com/rocelab/rocelab/core/clock"
)

// wireOverhead is what a frame costs on the wire beyond its bytes: FCS,
// preamble and SFD, inter-frame gap (as wire.OnWireBytes counts).
const wireOverhead = 4 + 8 + 12

// AutoScale returns the scale factor k >= 1 that fits a fabric into a
// machine: aggregate is the fabric's aggregate forwarding rate at full
// load — the sum of the line rates of every port that forwards (each
// frame costs the machine one read and one write per hop, so every switch
// egress port counts, and every NIC egress) — meanFrameBytes the mean
// frame (wire.Packet.Len) the traffic will use, and capacityPPS the
// frames per second the machine was measured to forward through one hop
// (all cores, read + model + write). The fabric's frame rate
// aggregate / (8 × (meanFrameBytes + 24)) divided by k must not exceed
// capacityPPS, so k is that ratio rounded up. The lab passes a capacity
// already derated for headroom (it picks k for, say, 50 % load so that
// bursts and timer jitter stay small in fabric time). Non-positive
// inputs return 1.
func AutoScale(aggregate clock.Rate, meanFrameBytes int, capacityPPS float64) int {
	if aggregate <= 0 || meanFrameBytes <= 0 || capacityPPS <= 0 {
		return 1
	}
	k := math.Ceil(FramesPerSecond(aggregate, meanFrameBytes)/capacityPPS - 1e-9)
	if k < 1 {
		return 1
	}
	if k > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(k)
}

// FramesPerSecond is the frame rate of an aggregate line rate in frames
// of meanFrameBytes (wire.Packet.Len; the wire overhead is added), in real
// (undilated) time: what AutoScale divides by the capacity.
func FramesPerSecond(aggregate clock.Rate, meanFrameBytes int) float64 {
	if aggregate <= 0 || meanFrameBytes <= 0 {
		return 0
	}
	return float64(aggregate) / (8 * float64(meanFrameBytes+wireOverhead))
}
