package endpoint_test

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pipe"
	"github.com/rocelab/rocelab/wire/wiretest"
)

const (
	g100 = 100 * clock.Gbps
	hop  = clock.Microsecond
)

// lossy drops each packet with probability p (data and control alike),
// from its own seeded stream. Only RoCE packets are dropped (never PFC).
type lossy struct {
	rng   *rand.Rand
	p     float64
	next  wire.Sink
	drops int64
}

func (l *lossy) Receive(p *wire.Packet) {
	if p.Kind == wire.KindRoCE && l.rng.Float64() < l.p {
		l.drops++
		return
	}
	l.next.Receive(p)
}

// star is n NICs on one switch, 1 µs cables.
type star struct {
	e     *sim.Engine
	sw    *switchmodel.Switch
	nics  []*endpoint.NIC
	lossy []*lossy // on each NIC → switch direction
}

type starOpts struct {
	n       int
	raw     bool
	loss    float64 // per direction, on every host link
	swcfg   func(*switchmodel.Config)
	nicOpts func(i int, o *endpoint.Options)
	seed    uint64
}

func newStar(t testing.TB, so starOpts) *star {
	t.Helper()
	e := sim.New(so.seed + 1)
	cfg := switchmodel.DefaultConfig()
	if so.swcfg != nil {
		so.swcfg(&cfg)
	}
	specs := make([]switchmodel.PortSpec, so.n)
	for i := range specs {
		specs[i] = switchmodel.PortSpec{Rate: g100, Delay: hop}
	}
	sw, err := switchmodel.New(switchmodel.Options{Name: "sw", Config: cfg, Sched: e, Rand: e.Rand("sw"), Ports: specs})
	if err != nil {
		t.Fatal(err)
	}
	s := &star{e: e, sw: sw}
	reg := endpoint.CCRegistry()
	for i := range so.n {
		o := endpoint.Options{Name: "h" + string(rune('0'+i%10)) + string(rune('a'+i/10)), Sched: e, Rand: e.Rand("nic" + wiretest.HostIP(i).String()),
			IP: wiretest.HostIP(i), MAC: [6]byte{2, 0, 0, 0, 0, byte(i)}, Raw: so.raw, CC: reg}
		if so.nicOpts != nil {
			so.nicOpts(i, &o)
		}
		nic, err := endpoint.NewNIC(o)
		if err != nil {
			t.Fatal(err)
		}
		var toSw wire.Sink = pipe.New(e, hop, sw.Port(i))
		var toNIC wire.Sink = nic
		if so.loss > 0 {
			l := &lossy{rng: e.Rand("loss-up" + wiretest.HostIP(i).String()), p: so.loss, next: toSw}
			s.lossy = append(s.lossy, l)
			toSw = l
			l2 := &lossy{rng: e.Rand("loss-down" + wiretest.HostIP(i).String()), p: so.loss, next: nic}
			s.lossy = append(s.lossy, l2)
			toNIC = l2
		}
		nic.Attach(toSw)
		sw.Attach(i, pipe.New(e, hop, toNIC))
		if err := sw.AddRoute(netip.PrefixFrom(wiretest.HostIP(i), 32), i); err != nil {
			t.Fatal(err)
		}
		s.nics = append(s.nics, nic)
	}
	return s
}

// peer is one end of a connection: NIC, PD, CQs, QP.
type peer struct {
	nic *endpoint.NIC
	pd  *endpoint.PD
	scq *endpoint.CQ
	rcq *endpoint.CQ
	qp  *endpoint.QP
}

// connect creates a QP on each NIC and connects them.
func connect(t testing.TB, a, b *endpoint.NIC, ca, cb endpoint.QPConfig) (*peer, *peer) {
	t.Helper()
	mk := func(n *endpoint.NIC, c endpoint.QPConfig) *peer {
		p := &peer{nic: n, pd: n.AllocPD(), scq: n.CreateCQ(0), rcq: n.CreateCQ(0)}
		c.SendCQ, c.RecvCQ = p.scq, p.rcq
		qp, err := p.pd.CreateQP(c)
		if err != nil {
			t.Fatal(err)
		}
		p.qp = qp
		return p
	}
	pa, pb := mk(a, ca), mk(b, cb)
	if err := pa.qp.Connect(pb.qp.Info()); err != nil {
		t.Fatal(err)
	}
	if err := pb.qp.Connect(pa.qp.Info()); err != nil {
		t.Fatal(err)
	}
	return pa, pb
}

func mustMR(t testing.TB, pd *endpoint.PD, buf []byte, acc endpoint.Access) *endpoint.MR {
	t.Helper()
	mr, err := pd.RegMR(buf, acc)
	if err != nil {
		t.Fatal(err)
	}
	return mr
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

const allAccess = endpoint.AccessLocalWrite | endpoint.AccessRemoteWrite | endpoint.AccessRemoteRead
