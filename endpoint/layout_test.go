package endpoint

import (
	"net/netip"
	"testing"
	"unsafe"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/internal/testenv"
)

// TestNICLayout holds the cache-line layout of a NIC's per-packet fields
// (see NIC): the scheduler, egress and last QP in line 0, the
// transmitter in line 1, the counters in line 2, and NICs allocated on a
// line.
func TestNICLayout(t *testing.T) {
	var n NIC
	testenv.CheckLayout(t, []testenv.Layout{
		{What: "NIC.txPkt's line", Got: unsafe.Offsetof(n.txPkt) / 64, Want: 0},
		{What: "NIC.active's offset", Got: unsafe.Offsetof(n.active), Want: 64},
		{What: "NIC.ctrlReady's line", Got: unsafe.Offsetof(n.ctrlReady) / 64, Want: 1},
		{What: "NIC.ctr's offset", Got: unsafe.Offsetof(n.ctr), Want: 128},
		{What: "NIC.opts' offset", Got: unsafe.Offsetof(n.opts), Want: 192},
	})
	testenv.OnLines(t, "a NIC", func() unsafe.Pointer {
		nic, err := NewNIC(Options{Name: "n", Sched: sim.New(1), IP: netip.AddrFrom4([4]byte{10, 0, 0, 1})})
		if err != nil {
			t.Fatal(err)
		}
		return unsafe.Pointer(nic)
	})
}

// TestQPLayout holds the cache-line layout of a QP's per-packet fields
// (see QP): the state and the peer's addressing in line 0, the packet and
// byte counters in line 1, and QPs allocated on a line.
func TestQPLayout(t *testing.T) {
	var q QP
	testenv.CheckLayout(t, []testenv.Layout{
		{What: "QP.state's line", Got: unsafe.Offsetof(q.state) / 64, Want: 0},
		{What: "QP.remote.MAC's line", Got: (unsafe.Offsetof(q.remote) + unsafe.Offsetof(q.remote.MAC)) / 64, Want: 0},
		{What: "QP.remote.IP's line", Got: (unsafe.Offsetof(q.remote) + unsafe.Offsetof(q.remote.IP)) / 64, Want: 0},
		{What: "QP.remote.QPN's line", Got: (unsafe.Offsetof(q.remote) + unsafe.Offsetof(q.remote.QPN)) / 64, Want: 0},
		{What: "QP.ctr.txPkts' line", Got: (unsafe.Offsetof(q.ctr) + unsafe.Offsetof(q.ctr.txPkts)) / 64, Want: 1},
		{What: "QP.ctr.rxDataBytes' line", Got: (unsafe.Offsetof(q.ctr) + unsafe.Offsetof(q.ctr.rxDataBytes)) / 64, Want: 1},
	})
	testenv.OnLines(t, "a QP", func() unsafe.Pointer {
		nic, err := NewNIC(Options{Name: "n", Sched: sim.New(1), IP: netip.AddrFrom4([4]byte{10, 0, 0, 1})})
		if err != nil {
			t.Fatal(err)
		}
		pd := nic.AllocPD()
		cq := nic.CreateCQ(16)
		qp, err := pd.CreateQP(QPConfig{SendCQ: cq, RecvCQ: cq})
		if err != nil {
			t.Fatal(err)
		}
		return unsafe.Pointer(qp)
	})
}
