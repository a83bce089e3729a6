package collective

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
)

// Ideal is an in-memory Transport with one NIC per rank and nothing in
// between: a rank's writes leave its NIC one after the other (FIFO) at
// Rate, land Latency later — bytes copied for real when both sides carry
// data — and the writer's completion follows one more Latency later (the
// acknowledgement). Receiving NICs are not a bottleneck, there is no loss.
// It is the reference the engine is tested against, and the ideal fabric a
// real run is compared with.
type Ideal struct {
	sched   clock.Scheduler
	rate    clock.Rate
	latency clock.Duration
	nicFree []clock.Time
	ranks   []idealRank
}

type idealRank struct {
	region  []byte
	size    int
	arrived ArrivalFunc
}

var _ Transport = (*Ideal)(nil)

// NewIdeal returns an ideal transport for n ranks whose NICs send at rate
// (0: infinitely fast) with a one-way latency per message.
func NewIdeal(sched clock.Scheduler, n int, rate clock.Rate, latency clock.Duration) *Ideal {
	return &Ideal{sched: sched, rate: rate, latency: latency,
		nicFree: make([]clock.Time, n), ranks: make([]idealRank, n)}
}

// Listen implements Transport.
func (t *Ideal) Listen(rank int, region []byte, size int, arrived ArrivalFunc) {
	t.ranks[rank] = idealRank{region: region, size: size, arrived: arrived}
}

// Write implements Transport.
func (t *Ideal) Write(w Write, done func(error)) error {
	n := len(t.ranks)
	if w.From < 0 || w.From >= n || w.To < 0 || w.To >= n {
		return fmt.Errorf("ideal: write %d→%d outside ranks 0..%d", w.From, w.To, n-1)
	}
	dst := t.ranks[w.To]
	if dst.arrived == nil {
		return fmt.Errorf("ideal: rank %d has no receive region", w.To)
	}
	if w.Len < 0 || w.Off < 0 || w.Off+w.Len > dst.size {
		return fmt.Errorf("ideal: write [%d,+%d) outside rank %d's %d-byte region", w.Off, w.Len, w.To, dst.size)
	}
	if (w.Src == nil) != (dst.region == nil) || (w.Src != nil && len(w.Src) < w.Len) {
		return fmt.Errorf("ideal: write of %d bytes from a %d-byte source into a region with data=%t",
			w.Len, len(w.Src), dst.region != nil)
	}
	now := t.sched.Now()
	start := max(now, t.nicFree[w.From])
	end := start.Add(t.rate.Serialize(w.Len))
	t.nicFree[w.From] = end
	land := end.Add(t.latency)
	t.sched.AfterFunc(land.Sub(now), func() {
		if dst.region != nil {
			copy(dst.region[w.Off:w.Off+w.Len], w.Src[:w.Len])
		}
		dst.arrived(w.From, w.Off, w.Len, w.Imm)
	})
	t.sched.AfterFunc(land.Add(t.latency).Sub(now), func() { done(nil) })
	return nil
}
