package endpoint

import (
	"net/netip"
	"testing"
	"unsafe"

	"github.com/rocelab/rocelab/core/sim"
)

// TestNICLayout holds the cache-line layout of a NIC's per-packet fields
// (see NIC): the scheduler, egress and last QP in line 0, the
// transmitter in line 1, the counters in line 2, and NICs allocated on a
// line.
func TestNICLayout(t *testing.T) {
	var n NIC
	checks := []struct {
		what      string
		got, want uintptr
	}{
		{"NIC.txPkt's line", unsafe.Offsetof(n.txPkt) / 64, 0},
		{"NIC.active's offset", unsafe.Offsetof(n.active), 64},
		{"NIC.ctrlReady's line", unsafe.Offsetof(n.ctrlReady) / 64, 1},
		{"NIC.ctr's offset", unsafe.Offsetof(n.ctr), 128},
		{"NIC.opts' offset", unsafe.Offsetof(n.opts), 192},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
	for i := range 16 {
		nic, err := NewNIC(Options{Name: "n", Sched: sim.New(1), IP: netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})})
		if err != nil {
			t.Fatal(err)
		}
		if a := uintptr(unsafe.Pointer(nic)); a%64 != 0 {
			t.Fatalf("a NIC allocated at %#x, not on a 64-byte line", a)
		}
	}
}
