package switchmodel

import (
	"testing"
	"unsafe"
)

// TestPortLayout holds the cache-line layout the simulator's speed rests
// on (see Port): the egress fields in line 0, the ingress fields in line
// 1, each priority group and queue starting a line with its hot fields,
// and ports allocated on line boundaries.
func TestPortLayout(t *testing.T) {
	var pt Port
	var g pg
	var q queue
	checks := []struct {
		what      string
		got, want uintptr
	}{
		{"Port.busyUntil's line", unsafe.Offsetof(pt.busyUntil) / 64, 0},
		{"Port.dwrrDirty's line", unsafe.Offsetof(pt.dwrrDirty) / 64, 0},
		{"Port.swRx's offset", unsafe.Offsetof(pt.swRx), 64},
		{"Port.idx's line", unsafe.Offsetof(pt.idx) / 64, 1},
		{"Port.pg's offset mod 64", unsafe.Offsetof(pt.pg) % 64, 0},
		{"Port.q's offset mod 64", unsafe.Offsetof(pt.q) % 64, 0},
		{"pg's size", unsafe.Sizeof(g), 64},
		{"queue's size", unsafe.Sizeof(q), 128},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
	s := &Switch{}
	for i := range 16 {
		p := newPort(s, i, PortSpec{})
		if a := uintptr(unsafe.Pointer(p)); a%64 != 0 {
			t.Fatalf("a Port (%d bytes) allocated at %#x, not on a 64-byte line", unsafe.Sizeof(pt), a)
		}
	}
}
