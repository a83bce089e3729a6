package switchmodel

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// The simulator's engine must offer the switch its allocation-free path;
// if sim.Engine.ScheduleAfter's signature drifts, this stops compiling
// instead of the switch silently falling back to AfterFunc.
var _ clock.HandlerScheduler = (*sim.Engine)(nil)
