package node

import (
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
)

// memberClock is the clock of a group member that is not its loop's
// leader, as telemetry: emu_fabric_seconds_total and emu_scale_factor
// under the member's name. The leader reports them with the loop's
// counters; the others need them too, because every real-unit rate (the
// dashboards' joins on(lab, node), rocelab stats) divides by the rate of
// its own node's fabric time. A clock is not work, so reporting it once
// per member counts nothing twice. Collect runs on the loop goroutine.
type memberClock struct {
	name string
	loop *emu.Loop
}

// Collect emits the member's fabric time and scale factor.
func (c memberClock) Collect(emit func(telemetry.Sample)) {
	node := []telemetry.Label{{Name: "node", Value: c.name}}
	emit(telemetry.Sample{Name: "emu_fabric_seconds_total", Kind: telemetry.Counter, Labels: node, Value: c.loop.Now().Seconds()})
	emit(telemetry.Sample{Name: "emu_scale_factor", Kind: telemetry.Gauge, Labels: node, Value: float64(c.loop.Scale())})
}

var _ telemetry.Source = memberClock{}
