package switchmodel_test

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pipe"
	"github.com/rocelab/rocelab/wire/wiretest"
)

// Common test numbers. A 1000-byte frame occupies 1000+4+8+12 = 1024 bytes
// on the wire, 81.92 ns at 100G.
const (
	g100    = 100 * clock.Gbps
	pktLen  = 1000
	wireLen = 1024
	hop     = clock.Microsecond // one-way cable delay
)

// roce returns a RoCEv2 data packet template from host src to host dst.
func roce(src, dst int, dscp uint8, sport uint16) wire.Packet {
	p := wiretest.RoCE(wiretest.HostIP(src), wiretest.HostIP(dst))
	p.Len, p.DSCP, p.SrcPort, p.DestQP = pktLen, dscp, sport, uint32(0x100+src)
	return *p
}

// newSwitch builds a switch of n ports of rate r on e, cables of delay hop.
func newSwitch(t testing.TB, e *sim.Engine, name string, cfg switchmodel.Config, rates []clock.Rate, onPFC func(port, prio int, xoff bool)) *switchmodel.Switch {
	t.Helper()
	specs := make([]switchmodel.PortSpec, len(rates))
	for i, r := range rates {
		specs[i] = switchmodel.PortSpec{Rate: r, Delay: hop}
	}
	sw, err := switchmodel.New(switchmodel.Options{
		Name:   name,
		Config: cfg,
		Sched:  e,
		Rand:   e.Rand("switch/" + name),
		Ports:  specs,
		OnPFC:  onPFC,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

func rates(n int, r clock.Rate) []clock.Rate {
	out := make([]clock.Rate, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// attachHost cables a new host of the port's rate to port of sw (hop each
// way) and routes wiretest.HostIP(id)/32 to that port.
func attachHost(t testing.TB, e *sim.Engine, sw *switchmodel.Switch, port, id int) *testbench.Host {
	t.Helper()
	pt := sw.Port(port)
	h := testbench.NewHost(sw.Name()+"-h"+pt.String(), e, pt.Rate(), pipe.New(e, hop, pt))
	sw.Attach(port, pipe.New(e, hop, h))
	if err := sw.AddRoute(netip.PrefixFrom(wiretest.HostIP(id), 32), port); err != nil {
		t.Fatal(err)
	}
	return h
}

// cable connects port pa of a with port pb of b, hop each way.
func cable(e *sim.Engine, a *switchmodel.Switch, pa int, b *switchmodel.Switch, pb int) {
	a.Attach(pa, pipe.New(e, hop, b.Port(pb)))
	b.Attach(pb, pipe.New(e, hop, a.Port(pa)))
}

// pfc returns a PFC frame pausing prio for quanta (0: resume).
func pfc(prio int, quanta uint16) *wire.Packet {
	p := &wire.Packet{Kind: wire.KindPFC, Len: switchmodel.PFCFrameLen, ClassEnable: 1 << uint(prio)}
	p.Quanta[prio] = quanta
	return p
}

// allDrops sums the switch's drops over every reason.
func allDrops(sw *switchmodel.Switch) int64 {
	var n int64
	for _, r := range []string{"ingress_admission", "no_headroom", "ttl", "no_route", "oversize",
		"to_switch", "egress_limit", "wred", "watchdog", "no_link"} {
		n += sw.Drops(r)
	}
	return n
}

// flow returns a flow of count copies of tmpl on priority prio.
func flow(tmpl wire.Packet, prio int, count int64) *testbench.Flow {
	return &testbench.Flow{Template: tmpl, Priority: prio, Count: count}
}

type testbenchHost = testbench.Host
