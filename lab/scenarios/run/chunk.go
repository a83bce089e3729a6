package run

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// chunkWall is about how much wall clock one chunk of a simulation may
// take: the run checks for a stop (Ctrl-C, SIGTERM) between chunks, so
// this bounds how long a stop waits, whatever the scenario's length or the
// fabric's size.
const chunkWall = 100 * time.Millisecond

// chunker runs a simulation in chunks of fabric time sized to the wall
// clock they take: doubled while a chunk takes under a quarter of
// chunkWall, halved when one takes longer than chunkWall. (A fixed share
// of the scenario's duration, as before, made a 100,000 s scenario check
// for a stop once a minute.) Chunk boundaries do not change what the
// simulation does: the events run in the same order either way.
type chunker struct {
	fabric clock.Duration // the next chunk's length
}

// run runs lab one chunk further, to until at the most.
func (c *chunker) run(lab *simlab.Lab, until clock.Duration) {
	start := time.Now()
	lab.Run(min(clock.Duration(lab.Now())+c.fabric, until))
	switch took := time.Since(start); {
	case took < chunkWall/4 && c.fabric < clock.Duration(1)<<60:
		c.fabric *= 2
	case took > chunkWall && c.fabric > clock.Nanosecond:
		c.fabric /= 2
	}
}
