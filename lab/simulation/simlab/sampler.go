package simlab

import (
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/topologies"
)

// SamplerSpec chooses what a Sampler records. With none of Queues, PFC
// and Flows set, all three are recorded.
type SamplerSpec struct {
	// Interval of fabric time between readings (default 10 µs).
	Interval clock.Duration
	// MaxPoints each series keeps (default 512); older points merge
	// pairwise as the run grows, totals stay exact.
	MaxPoints int
	// MaxBytes bounds the memory of all series together (default 64 MiB):
	// when the lab has so many probes that MaxPoints each would pass it,
	// each keeps fewer points (at least 16). A 1,024-host fabric has
	// about 17,000 series; at 512 points they held 350 MB.
	MaxBytes int64
	// TCs are the traffic classes (and priority groups) whose queues and
	// pause state are recorded; default the lossless classes of the
	// topology's profiles (3 if none).
	TCs []int
	// Queues records switch_queue_depth_bytes{node,port,tc} of every
	// switch port and switch_buffer_used_bytes{node} of every switch.
	Queues bool
	// PFC records the pause state per link direction:
	// switch_pg_xoff{node,port,pg} (1 while the switch pauses the peer
	// of that port), switch_queue_paused{node,port,tc} (1 while the peer
	// pauses the switch port) and nic_paused{node,prio} (1 while a NIC is
	// paused).
	PFC bool
	// Flows records perf_flow_rate_bytes_per_second{job,from,to}: each Perf flow's
	// delivered payload rate over the last interval.
	Flows bool
	// Ports records switch_port_tx_bytes_total{node,port} and
	// switch_port_rx_bytes_total{node,port} of every switch port
	// (counters: a replay's link utilisation is their rate).
	Ports bool
	// Samples names extra telemetry samples recorded from the whole lab
	// (telemetry.Gather each interval: costly on large fabrics).
	Samples []string
	// Probes are custom readings, taken each interval.
	Probes []Probe
	// Aggregate records aggregates instead of a series per queue, port
	// and flow, for a large fabric (LargeFabric), whose series would cost
	// more than its report can draw: with Queues, PFC or Ports, per switch
	// AggSwitchDepth, AggSwitchTx and AggSwitchPaused, and per role of
	// switch (tier, TierRole for none) AggTierDepth (p50, p99, max over
	// its queues), AggTierPaused, AggTierXOff and AggTierQueues, and over
	// all NICs AggNICPaused and AggNICs; with Flows, per Perf job
	// AggJobRate and AggJobActive. Memory grows with the switches and
	// jobs, not the ports or flows; a reading reads every switch port once.
	Aggregate bool
}

// Probe is a custom reading: Read is called each interval.
type Probe struct {
	Name   string
	Labels []telemetry.Label
	Kind   telemetry.Kind
	Read   func() float64
}

// Sampler records readings into a Store every interval of fabric time.
type Sampler struct {
	l        *Lab
	spec     SamplerSpec
	store    *Store
	timer    clock.Timer
	probes   []Probe
	handles  []*series // of probes[i], once it has read
	flowPrev map[*Flow]int64
	// flowCarry are bytes a flow delivered that its last interval could
	// not have carried at the receiver's line rate: they count in the
	// next interval (a packet counts when it has arrived, so an interval
	// may hold one more packet than its wire carried in it).
	flowCarry map[*Flow]int64
	flowRate  map[*Flow]*series
	agg       *aggregator         // Aggregate's switch and tier series
	jobAgg    map[*PerfJob]jobAgg // Aggregate's job series
	extra     map[string]bool
	last      clock.Time // time of the last reading
	read      bool       // a reading was taken
}

// Sample starts a sampler now; it reads once immediately, then every
// interval, until Stop.
func (l *Lab) Sample(spec SamplerSpec) *Sampler {
	if spec.Interval <= 0 {
		spec.Interval = 10 * clock.Microsecond
	}
	if spec.MaxPoints <= 0 {
		spec.MaxPoints = 512
	}
	if !spec.Queues && !spec.PFC && !spec.Flows {
		spec.Queues, spec.PFC, spec.Flows = true, true, true
	}
	if len(spec.TCs) == 0 {
		spec.TCs = l.losslessTCs()
	}
	if spec.MaxBytes <= 0 {
		spec.MaxBytes = 64 << 20
	}
	s := &Sampler{l: l, spec: spec, flowPrev: map[*Flow]int64{}, flowCarry: map[*Flow]int64{}, flowRate: map[*Flow]*series{}, extra: map[string]bool{}}
	for _, n := range spec.Samples {
		s.extra[n] = true
	}
	s.build()
	s.probes = append(s.probes, spec.Probes...)
	s.handles = make([]*series, len(s.probes))
	n := int64(len(s.probes) + 1)
	if spec.Aggregate {
		// Three series per switch, a few per tier and job.
		n += 3*int64(len(l.fab.Switches())) + 64
	}
	if fit := spec.MaxBytes / (bucketBytes * n); int64(spec.MaxPoints) > fit {
		s.spec.MaxPoints = int(max(fit, 16))
	}
	s.store = NewStore(spec.Interval, s.spec.MaxPoints)
	if spec.Aggregate {
		s.jobAgg = map[*PerfJob]jobAgg{}
		if spec.Queues || spec.PFC || spec.Ports {
			s.agg = newAggregator(l, s.store, spec.TCs, l.now())
		}
	}
	// Flows already running count from now; later ones from zero.
	for _, j := range l.jobs {
		if pj, ok := j.(*PerfJob); ok && pj.started {
			for _, f := range pj.flows {
				s.flowPrev[f] = f.RxBytes()
			}
		}
	}
	s.last = l.now()
	l.ticks++
	s.timer = l.at(l.now(), s.tick)
	return s
}

// losslessTCs returns the classes some switch profile makes lossless.
func (l *Lab) losslessTCs() []int {
	var out []int
	for tc := range topologies.NumTC {
		for _, p := range l.topo.Profiles {
			if p.PFC.Lossless[tc] {
				out = append(out, tc)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []int{3}
	}
	return out
}

// build turns the switch and NIC readings of the spec into probes.
func (s *Sampler) build() {
	l, spec := s.l, s.spec
	if spec.Aggregate {
		return // the aggregator reads switches and NICs (newAggregator)
	}
	g := func(name string, labels []telemetry.Label, read func() float64) {
		s.probes = append(s.probes, Probe{Name: name, Labels: labels, Kind: telemetry.Gauge, Read: read})
	}
	for _, sw := range l.fab.Switches() {
		node := []telemetry.Label{{Name: "node", Value: sw.Name()}}
		if spec.Queues {
			g("switch_buffer_used_bytes", node, func() float64 { return float64(sw.BufferUsed()) })
		}
		for i := range sw.NumPorts() {
			pt := sw.Port(i)
			pl := telemetry.With(node, telemetry.Label{Name: "port", Value: strconv.Itoa(i)})
			if spec.Ports {
				c := func(name string, read func() float64) {
					s.probes = append(s.probes, Probe{Name: name, Labels: pl, Kind: telemetry.Counter, Read: read})
				}
				c("switch_port_tx_bytes_total", func() float64 { _, tx := pt.Bytes(); return float64(tx) })
				c("switch_port_rx_bytes_total", func() float64 { rx, _ := pt.Bytes(); return float64(rx) })
			}
			for _, tc := range spec.TCs {
				tcs := strconv.Itoa(tc)
				if spec.Queues {
					g("switch_queue_depth_bytes", telemetry.With(pl, telemetry.Label{Name: "tc", Value: tcs}),
						func() float64 { return float64(pt.Queue(tc).DepthBytes) })
				}
				if spec.PFC {
					g("switch_pg_xoff", telemetry.With(pl, telemetry.Label{Name: "pg", Value: tcs}),
						func() float64 { return b2f(pt.PG(tc).XOff) })
					g("switch_queue_paused", telemetry.With(pl, telemetry.Label{Name: "tc", Value: tcs}),
						func() float64 { return b2f(pt.Queue(tc).Paused) })
				}
			}
		}
	}
	if spec.PFC {
		for _, n := range l.nics {
			for _, tc := range spec.TCs {
				g("nic_paused", []telemetry.Label{{Name: "node", Value: n.Name()}, {Name: "prio", Value: strconv.Itoa(tc)}},
					func() float64 { return b2f(n.Paused(tc)) })
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// tick takes one round of readings and arms the next.
func (s *Sampler) tick() {
	s.readAll()
	s.timer = s.l.at(s.l.now().Add(s.spec.Interval), s.tick)
}

// readAll takes one round of readings at the current time.
func (s *Sampler) readAll() {
	l := s.l
	now := l.now()
	for i, p := range s.probes {
		s.store.recordTo(&s.handles[i], p.Name, p.Labels, p.Kind, now, p.Read())
	}
	if s.agg != nil {
		s.agg.read(s.store, s.spec.TCs, now)
	}
	if s.spec.Flows {
		s.flows(now)
	}
	if len(s.extra) > 0 {
		l.Collect(func(sm telemetry.Sample) {
			if s.extra[sm.Name] {
				s.store.Record(sm.Name, slices.Clone(sm.Labels), sm.Kind, now, sm.Value)
			}
		})
	}
	s.last, s.read = now, true
}

// flows records each Perf flow's rate since the last reading.
func (s *Sampler) flows(now clock.Time) {
	secs := now.Sub(s.last).Seconds()
	if secs <= 0 {
		return
	}
	for _, j := range s.l.jobs {
		pj, ok := j.(*PerfJob)
		if !ok || !pj.started {
			continue
		}
		var jobBytes float64
		active := 0
		for _, f := range pj.flows {
			rx := f.RxBytes()
			prev, seen := s.flowPrev[f] // unseen: started after the sampler, from 0
			s.flowPrev[f] = rx
			carry := s.flowCarry[f]
			if f.finished && seen && rx == prev && carry == 0 {
				continue // the flow ended: stop its series
			}
			// What the interval shows is at most what the receiver's
			// link carries in it; the rest shows in the next one, so the
			// bytes add up and no point exceeds the line rate.
			delivered := rx - prev + carry
			if line := f.lineRate(); line > 0 {
				delivered = min(delivered, int64(float64(line)/8*secs))
			}
			s.flowCarry[f] = rx - prev + carry - delivered
			if s.jobAgg != nil {
				jobBytes += float64(delivered)
				if !f.finished {
					active++
				}
				continue
			}
			h := s.flowRate[f]
			if h == nil {
				labels := []telemetry.Label{{Name: "job", Value: pj.spec.Name}, {Name: "from", Value: f.From}, {Name: "to", Value: f.To}}
				h = s.store.open("perf_flow_rate_bytes_per_second", labels, telemetry.Gauge, now)
				s.flowRate[f] = h
			}
			s.store.add(h, now, float64(delivered)/secs)
		}
		if s.jobAgg != nil {
			s.jobRecord(pj, now, jobBytes/secs, active)
		}
	}
}

// jobRecord records a Perf job's aggregate rate and active flows.
func (s *Sampler) jobRecord(pj *PerfJob, now clock.Time, rate float64, active int) {
	h, ok := s.jobAgg[pj]
	if !ok {
		jl := []telemetry.Label{{Name: "job", Value: pj.spec.Name}}
		h = jobAgg{rate: s.store.open(AggJobRate, jl, telemetry.Gauge, now), active: s.store.open(AggJobActive, jl, telemetry.Gauge, now)}
		s.jobAgg[pj] = h
	}
	s.store.add(h.rate, now, rate)
	s.store.add(h.active, now, float64(active))
}

// Store returns the sampler's store.
func (s *Sampler) Store() *Store { return s.store }

// Series returns a snapshot of every recorded series (Store().All()).
func (s *Sampler) Series() []Series { return s.store.All() }

// Stop takes a last reading (if time passed since the previous one) and
// stops the sampler; the store keeps what it recorded. Stopping twice is a
// no-op.
func (s *Sampler) Stop() {
	if s.timer == nil {
		return
	}
	if s.l.now() > s.last || !s.read {
		s.readAll()
	}
	s.timer.Stop()
	s.timer = nil
	s.l.ticks--
}
