package labsource

import (
	"math"

	"github.com/rocelab/rocelab/core/clock"
)

func secondsToTime(s float64) clock.Time { return clock.Time(math.Round(s * 1e12)) }
