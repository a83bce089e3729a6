package fabric

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/wire"
)

// TestSimToSwitch: in the simulator, packets from host1:gpu0 to a
// switch's own addresses stop at that switch (reason to_switch; the
// simulator's descriptors carry no bytes to answer): the address of rtsw1's
// port facing host1:gpu1, which its /31 covers, used to be forwarded to
// that NIC, and ctsw1's loopback and uplink address used to drop as
// no_route.
func TestSimToSwitch(t *testing.T) {
	topo := loadTopo(t, "laptop")
	e := sim.New(1)
	f, err := BuildSim(e, topo, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := topo.Node("host1").Port("gpu0")
	h := testbench.NewHost("h", e, src.Rate, nil)
	out, err := f.Attach("host1", "gpu0", h)
	if err != nil {
		t.Fatal(err)
	}
	h.SetOut(out)
	other := testbench.NewHost("other", e, src.Rate, nil)
	if _, err := f.Attach("host1", "gpu1", other); err != nil {
		t.Fatal(err)
	}
	rtsw1 := topo.Node("rtsw1").Port("p2").Addr.Addr()
	ctsw1 := topo.Node("ctsw1")
	for _, dst := range []netip.Addr{rtsw1, ctsw1.Loopback, ctsw1.Ports[0].Addr.Addr()} {
		h.AddFlow(&testbench.Flow{Template: wire.Packet{
			Kind: wire.KindIP, Len: 100, IPVersion: 4, SrcIP: src.Addr.Addr(), DstIP: dst,
			TTL: 64, Protocol: 1, EtherType: wire.EtherTypeIPv4,
		}, Count: 2})
	}
	e.RunFor(100 * clock.Microsecond)
	if got := f.Drops("to_switch"); got != 6 {
		t.Errorf("to_switch drops %d, want 6", got)
	}
	for _, r := range []string{"no_route", "ttl", "no_link"} {
		if got := f.Drops(r); got != 0 {
			t.Errorf("%s drops %d, want 0", r, got)
		}
	}
	if other.Counter.Packets != 0 || h.Counter.Packets != 0 {
		t.Errorf("hosts received %d and %d packets, want none", h.Counter.Packets, other.Counter.Packets)
	}
}
