package credit

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// ReceiverStats counts what a Receiver did.
type ReceiverStats struct {
	Grants         uint64 // grants sent
	GrantedBytes   int64  // bytes granted (re-grants included)
	Regrants       uint64 // flows whose outstanding credit timed out
	RegrantedBytes int64  // bytes returned to demand by the watchdog
	ArrivedBytes   int64  // bytes reported by OnData
	ExcessBytes    int64  // arrivals beyond a flow's outstanding and unscheduled credit
}

// flow is the receiver's view of one sender.
type flow struct {
	id          uint32
	unsched     int64      // unscheduled credit not yet matched to a request
	ahead       int64      // unscheduled bytes that arrived before their request
	demand      int64      // requested, not yet granted
	outstanding int64      // granted (or unscheduled and requested), not yet arrived
	since       clock.Time // last arrival, or when outstanding rose from zero
	active      bool       // in Receiver.active
}

// Receiver grants credit to the flows arriving at one NIC port.
type Receiver struct {
	sched clock.Scheduler
	cfg   Config
	send  func(cc.Grant)
	pace  clock.Rate

	flows  map[uint32]*flow
	active []*flow // flows with demand or outstanding bytes, in first-request order
	rr     int     // round-robin position in active (taken modulo its length)
	total  int64   // outstanding bytes over all flows

	nextGrant clock.Time
	pacer     clock.Timer
	watchdog  clock.Timer
	stats     ReceiverStats
	closed    bool

	onPacerFn, onWatchdogFn func()
}

var _ cc.Receiver = (*Receiver)(nil)

// NewReceiver returns a receiver pacing grants at cfg.RateFraction of line.
func NewReceiver(sched clock.Scheduler, line clock.Rate, send func(cc.Grant), cfg Config) *Receiver {
	r := &Receiver{
		sched: sched, cfg: cfg, send: send,
		pace:  max(1, clock.Rate(float64(line)*cfg.RateFraction)),
		flows: map[uint32]*flow{},
	}
	r.onPacerFn, r.onWatchdogFn = r.onPacer, r.onWatchdog
	return r
}

// Stats returns the counters.
func (r *Receiver) Stats() ReceiverStats { return r.stats }

// Outstanding returns the granted-not-arrived bytes of flow, and of all flows.
func (r *Receiver) Outstanding(id uint32) (flowBytes, total int64) {
	if f := r.flows[id]; f != nil {
		flowBytes = f.outstanding
	}
	return flowBytes, r.total
}

// Demand returns the requested-not-granted bytes of flow.
func (r *Receiver) Demand(id uint32) int64 {
	if f := r.flows[id]; f != nil {
		return f.demand
	}
	return 0
}

func (r *Receiver) get(id uint32) *flow {
	f := r.flows[id]
	if f == nil {
		f = &flow{id: id, unsched: r.cfg.Unscheduled}
		r.flows[id] = f
	}
	return f
}

// OnRequest adds bytes to flow's backlog.
func (r *Receiver) OnRequest(id uint32, bytes int64) {
	if bytes <= 0 {
		return
	}
	now := r.sched.Now()
	f := r.get(id)
	cover := min(bytes, f.ahead) // already arrived as unscheduled data
	f.ahead -= cover
	bytes -= cover
	take := min(bytes, f.unsched) // the sender sends these unscheduled
	f.unsched -= take
	r.addOutstanding(f, take, now)
	f.demand += bytes - take
	r.activate(f)
	r.kick()
}

// OnData records n bytes of flow arriving; CE marks are ignored.
func (r *Receiver) OnData(id uint32, n int, _ bool) {
	if n <= 0 {
		return
	}
	now := r.sched.Now()
	f := r.get(id)
	b := int64(n)
	r.stats.ArrivedBytes += b
	d := min(b, f.outstanding)
	f.outstanding -= d
	r.total -= d
	f.since = now
	if excess := b - d; excess > 0 {
		// Unscheduled data ahead of its request, or late data after a re-grant.
		ahead := min(excess, f.unsched)
		f.unsched -= ahead
		f.ahead += ahead
		r.stats.ExcessBytes += excess - ahead
	}
	if f.demand == 0 && f.outstanding == 0 {
		r.deactivate(f)
	}
	r.kick()
}

func (r *Receiver) addOutstanding(f *flow, b int64, now clock.Time) {
	if b <= 0 {
		return
	}
	if f.outstanding == 0 {
		f.since = now
	}
	f.outstanding += b
	r.total += b
	if r.watchdog == nil && !r.closed {
		r.watchdog = r.sched.AfterFunc(r.cfg.RegrantTimeout/4, r.onWatchdogFn)
	}
}

func (r *Receiver) activate(f *flow) {
	if !f.active && (f.demand > 0 || f.outstanding > 0) {
		f.active = true
		r.active = append(r.active, f)
	}
}

func (r *Receiver) deactivate(f *flow) {
	if !f.active {
		return
	}
	f.active = false
	for i, g := range r.active {
		if g == f {
			r.active = append(r.active[:i], r.active[i+1:]...)
			if i < r.rr {
				r.rr--
			}
			break
		}
	}
}

// size returns the grant f may get now, or 0.
func (r *Receiver) size(f *flow) int64 {
	g := min(r.cfg.GrantBytes, f.demand)
	if g <= 0 || f.outstanding+g > r.cfg.MaxOutstanding {
		return 0
	}
	if r.cfg.TotalOutstanding > 0 && r.total+g > r.cfg.TotalOutstanding {
		return 0
	}
	return g
}

// pick returns the index in active of the next flow to grant, or -1.
func (r *Receiver) pick() int {
	n := len(r.active)
	if r.cfg.Policy == SRPT {
		best := -1
		for i, f := range r.active {
			if r.size(f) == 0 {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			b := r.active[best]
			if rem, brem := f.demand+f.outstanding, b.demand+b.outstanding; rem < brem || rem == brem && f.id < b.id {
				best = i
			}
		}
		return best
	}
	for k := range n {
		i := (r.rr + k) % n
		if r.size(r.active[i]) > 0 {
			return i
		}
	}
	return -1
}

// kick grants while the pacer allows and schedules its next wake-up.
func (r *Receiver) kick() {
	for r.pacer == nil && !r.closed {
		i := r.pick()
		if i < 0 {
			return
		}
		now := r.sched.Now()
		if r.nextGrant > now {
			r.pacer = r.sched.AfterFunc(r.nextGrant.Sub(now), r.onPacerFn)
			return
		}
		f := r.active[i]
		g := r.size(f)
		f.demand -= g
		r.addOutstanding(f, g, now)
		r.rr = i + 1 // the flow after f; a flow appended since comes next
		r.nextGrant = now.Add(r.pace.Serialize(int(g)))
		r.stats.Grants++
		r.stats.GrantedBytes += g
		r.send(cc.Grant{Flow: f.id, Bytes: g})
	}
}

func (r *Receiver) onPacer() {
	r.pacer = nil
	r.kick()
}

func (r *Receiver) onWatchdog() {
	r.watchdog = nil
	now := r.sched.Now()
	busy := false
	for _, f := range r.active {
		if f.outstanding == 0 {
			continue
		}
		if now.Sub(f.since) >= r.cfg.RegrantTimeout {
			r.stats.Regrants++
			r.stats.RegrantedBytes += f.outstanding
			f.demand += f.outstanding
			r.total -= f.outstanding
			f.outstanding = 0
			continue
		}
		busy = true
	}
	if busy {
		r.watchdog = r.sched.AfterFunc(r.cfg.RegrantTimeout/4, r.onWatchdogFn)
	}
	r.kick()
}

// Close cancels the pacer and the watchdog.
func (r *Receiver) Close() {
	r.closed = true
	if r.pacer != nil {
		r.pacer.Stop()
		r.pacer = nil
	}
	if r.watchdog != nil {
		r.watchdog.Stop()
		r.watchdog = nil
	}
}
