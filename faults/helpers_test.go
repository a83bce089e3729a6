package faults

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/wiretest"
)

// arrival is one packet a recorder saw.
type arrival struct {
	at  clock.Time
	psn uint32
	raw string
}

// recorder is a sink that records what reaches it.
type recorder struct {
	sched clock.Scheduler
	got   []arrival
	pkts  []*wire.Packet
}

func (r *recorder) Receive(p *wire.Packet) {
	var now clock.Time
	if r.sched != nil {
		now = r.sched.Now()
	}
	r.got = append(r.got, arrival{at: now, psn: p.PSN, raw: string(p.Raw)})
	r.pkts = append(r.pkts, p)
}

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xfa17)) }

// roce returns a payload-free RoCE descriptor (RDMA WRITE Only to QP
// 0x12) with sequence number psn.
func roce(psn uint32) *wire.Packet {
	p := wiretest.RoCE(wiretest.HostIP(1), wiretest.HostIP(2))
	p.SrcPort, p.Opcode, p.DestQP, p.PSN = 49152, 0x0A, 0x12, psn
	return p
}

// rawRoCE builds and decodes a RoCE frame with bytes (IPv4 or IPv6).
func rawRoCE(t testing.TB, psn uint32, v6 bool, payload int) *wire.Packet {
	t.Helper()
	spec := roce(psn)
	spec.Opcode = 0x04 // RC SEND only
	if v6 {
		spec.SrcIP, spec.DstIP = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
		spec.IPVersion = 6
	}
	pl := make([]byte, payload)
	for i := range pl {
		pl[i] = byte(i*7 + int(psn))
	}
	raw, err := wire.BuildFrame(spec, pl)
	if err != nil {
		t.Fatal(err)
	}
	var p wire.Packet
	if err := p.Decode(raw); err != nil {
		t.Fatal(err)
	}
	p.Raw = raw
	return &p
}

// sendEvery schedules n packets made by mk on e, one every gap from
// start, into s.
func sendEvery(e *sim.Engine, start clock.Time, gap clock.Duration, n int, s wire.Sink, mk func(i int) *wire.Packet) {
	for i := range n {
		e.At(start.Add(clock.Duration(i)*gap), func() { s.Receive(mk(i)) })
	}
}

// meanSD returns the mean and standard deviation of xs.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// chained builds spec into a chain on e in front of out and returns both.
func chained(t testing.TB, e *sim.Engine, spec string, out wire.Sink) (*Chain, Fault) {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.New(Env{Sched: e, Rand: e.Rand("fault"), Rate: 100 * clock.Gbps})
	if err != nil {
		t.Fatal(err)
	}
	c := NewChain(out)
	if _, err := c.Add(f); err != nil {
		t.Fatal(err)
	}
	return c, f
}

func counters(f Fault) Counters {
	return f.(interface{ Stats() Counters }).Stats()
}
