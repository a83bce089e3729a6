package simlab

import (
	"cmp"
	"math"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// LargeFabricPorts is the number of switch ports above which a fabric is
// large (LargeFabric): its sampler aggregates (SamplerSpec.Aggregate) and
// its report draws distributions and heat maps instead of one line per
// queue or flow. The 1,024-host clos-1024 (5,120 ports) is below it; a
// seed-24k shaped fabric of 2,048 GPUs or more is above; seed-24k has
// 122,880.
const LargeFabricPorts = 8192

// LargeFabric reports whether t has more than LargeFabricPorts switch
// ports.
func LargeFabric(t *topologies.Topology) bool {
	if t == nil {
		return false
	}
	n := 0
	for _, node := range t.Nodes {
		if node.Kind == topologies.KindSwitch {
			n += len(node.Ports)
		}
	}
	return n > LargeFabricPorts
}

// Names of the aggregated series (SamplerSpec.Aggregate).
const (
	// AggSwitchDepth is switch_queue_depth_max_bytes{node}: the deepest
	// of a switch's queues (of the sampled classes) at each reading.
	AggSwitchDepth = "switch_queue_depth_max_bytes"
	// AggSwitchTx is switch_tx_bytes_total{node}: the bytes all of a
	// switch's ports sent (a counter).
	AggSwitchTx = "switch_tx_bytes_total"
	// AggSwitchPaused is switch_paused_seconds_total{node}: the time its
	// egress queues were paused by their peers, summed over its queues
	// (a counter: its rate is the mean number of paused queues).
	AggSwitchPaused = "switch_paused_seconds_total"
	// AggTierDepth is switch_tier_queue_depth_bytes{role,stat}: the
	// p50, p99 and max (stat) of the depths of every egress queue of
	// the switches of a role (tier) at each reading, nearest rank.
	AggTierDepth = "switch_tier_queue_depth_bytes"
	// AggTierPaused and AggTierXOff are
	// switch_tier_queue_paused_seconds_total{role} and
	// switch_tier_pg_xoff_seconds_total{role}: the pause times of the
	// tier's egress queues and the XOFF times of its PGs, summed.
	AggTierPaused = "switch_tier_queue_paused_seconds_total"
	AggTierXOff   = "switch_tier_pg_xoff_seconds_total"
	// AggTierQueues is switch_tier_queues{role}: how many queues the tier
	// has (of the sampled classes), to turn the sums into fractions.
	AggTierQueues = "switch_tier_queues"
	// AggNICPaused is nic_tier_paused_seconds_total: the time every NIC's
	// sampled priorities were paused, summed; AggNICs how many NIC
	// priorities that is (nic_tier_priorities).
	AggNICPaused = "nic_tier_paused_seconds_total"
	AggNICs      = "nic_tier_priorities"
	// AggJobRate is perf_job_rate_bytes_per_second{job}: the delivered
	// payload rate of all of a Perf job's flows together, and
	// AggJobActive perf_job_active_flows{job} how many of them had not
	// finished.
	AggJobRate   = "perf_job_rate_bytes_per_second"
	AggJobActive = "perf_job_active_flows"
)

// TierRole is the role label of a switch without one (a hand-written
// topology's).
const TierRole = "switch"

// aggregator reads every switch port at each reading and records
// aggregates only: per switch three series, per tier six.
type aggregator struct {
	tiers []*tier
	nics  []nicRead
	nicH  *series
	// nz is scratch: the non-zero depths of one tier's reading.
	nz []int64
}

type nicRead func() clock.Duration

// tier is the switches of one role.
type tier struct {
	role     string
	switches []*aggSwitch
	queues   int
	h        [5]*series // p50, p99, max, paused, xoff
}

type aggSwitch struct {
	sw               *switchmodel.Switch
	depth, tx, pause *series
}

// tierStats are the quantiles a tier reading records, in order.
var tierStats = []struct {
	stat string
	q    float64
}{{"p50", 0.50}, {"p99", 0.99}, {"max", 1}}

// newAggregator groups the lab's switches by role, in the order of
// Role.Tier then name, and opens their series at t.
func newAggregator(l *Lab, st *Store, tcs []int, t clock.Time) *aggregator {
	a := &aggregator{}
	byRole := map[string]*tier{}
	for _, sw := range l.fab.Switches() {
		role := TierRole
		if n := l.topo.Node(sw.Name()); n != nil && n.Role != "" {
			role = string(n.Role)
		}
		tr := byRole[role]
		if tr == nil {
			tr = &tier{role: role}
			byRole[role] = tr
			a.tiers = append(a.tiers, tr)
		}
		node := []telemetry.Label{{Name: "node", Value: sw.Name()}}
		tr.switches = append(tr.switches, &aggSwitch{sw: sw,
			depth: st.open(AggSwitchDepth, node, telemetry.Gauge, t),
			tx:    st.open(AggSwitchTx, node, telemetry.Counter, t),
			pause: st.open(AggSwitchPaused, node, telemetry.Counter, t)})
		tr.queues += sw.NumPorts() * len(tcs)
	}
	slices.SortStableFunc(a.tiers, func(x, y *tier) int {
		return cmp.Or(cmp.Compare(topologies.Role(x.role).Tier(), topologies.Role(y.role).Tier()), cmp.Compare(x.role, y.role))
	})
	for _, tr := range a.tiers {
		rl := []telemetry.Label{{Name: "role", Value: tr.role}}
		for i, s := range tierStats {
			tr.h[i] = st.open(AggTierDepth, telemetry.With(rl, telemetry.Label{Name: "stat", Value: s.stat}), telemetry.Gauge, t)
		}
		tr.h[3] = st.open(AggTierPaused, rl, telemetry.Counter, t)
		tr.h[4] = st.open(AggTierXOff, rl, telemetry.Counter, t)
		st.add(st.open(AggTierQueues, rl, telemetry.Gauge, t), t, float64(tr.queues))
	}
	for _, n := range l.nics {
		for _, tc := range tcs {
			a.nics = append(a.nics, func() clock.Duration { return n.PausedTime(tc) })
		}
	}
	if len(a.nics) > 0 {
		a.nicH = st.open(AggNICPaused, nil, telemetry.Counter, t)
		st.add(st.open(AggNICs, nil, telemetry.Gauge, t), t, float64(len(a.nics)))
	}
	return a
}

// read takes one reading of every switch port (classes tcs) and NIC.
func (a *aggregator) read(st *Store, tcs []int, now clock.Time) {
	for _, tr := range a.tiers {
		a.nz = a.nz[:0]
		var paused, xoff clock.Duration
		for _, s := range tr.switches {
			var deepest, tx int64
			var swPaused clock.Duration
			for i := range s.sw.NumPorts() {
				pt := s.sw.Port(i)
				_, b := pt.Bytes()
				tx += b
				for _, tc := range tcs {
					c := pt.Class(tc)
					if c.DepthBytes > 0 {
						a.nz = append(a.nz, c.DepthBytes)
						deepest = max(deepest, c.DepthBytes)
					}
					swPaused += c.PausedTime
					xoff += c.XOffTime
				}
			}
			paused += swPaused
			st.add(s.depth, now, float64(deepest))
			st.add(s.tx, now, float64(tx))
			st.add(s.pause, now, swPaused.Seconds())
		}
		slices.Sort(a.nz)
		for i, s := range tierStats {
			st.add(tr.h[i], now, float64(nearestRank(a.nz, tr.queues, s.q)))
		}
		st.add(tr.h[3], now, paused.Seconds())
		st.add(tr.h[4], now, xoff.Seconds())
	}
	if a.nicH != nil {
		var p clock.Duration
		for _, f := range a.nics {
			p += f()
		}
		st.add(a.nicH, now, p.Seconds())
	}
}

// nearestRank returns the q-quantile (0 < q <= 1, nearest rank: the
// ceil(q·n)-th smallest) of n values of which nonzero, sorted, are the
// ones above zero and the rest are zero; 0 when n is 0.
func nearestRank(nonzero []int64, n int, q float64) int64 {
	if n <= 0 {
		return 0
	}
	r := max(int(math.Ceil(q*float64(n))), 1) // 1-based rank
	zeros := n - len(nonzero)
	if r <= zeros {
		return 0
	}
	return nonzero[min(r-zeros, len(nonzero))-1]
}

// jobAgg accumulates one Perf job's flows at a reading.
type jobAgg struct {
	rate, active *series
}
