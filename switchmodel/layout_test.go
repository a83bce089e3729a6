package switchmodel

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/rocelab/rocelab/internal/testenv"
)

// TestPortLayout holds the cache-line layout the simulator's speed rests
// on (see Port): the egress fields in line 0, the ingress fields in line
// 1, each priority group and queue starting a line with its hot fields,
// and ports allocated on line boundaries.
func TestPortLayout(t *testing.T) {
	var pt Port
	var g pg
	var q queue
	testenv.CheckLayout(t, []testenv.Layout{
		{What: "Port.busyUntil's line", Got: unsafe.Offsetof(pt.busyUntil) / 64, Want: 0},
		{What: "Port.dwrrDirty's line", Got: unsafe.Offsetof(pt.dwrrDirty) / 64, Want: 0},
		{What: "Port.swRx's offset", Got: unsafe.Offsetof(pt.swRx), Want: 64},
		{What: "Port.idx's line", Got: unsafe.Offsetof(pt.idx) / 64, Want: 1},
		{What: "Port.pg's offset mod 64", Got: unsafe.Offsetof(pt.pg) % 64, Want: 0},
		{What: "Port.q's offset mod 64", Got: unsafe.Offsetof(pt.q) % 64, Want: 0},
		{What: "pg's size", Got: unsafe.Sizeof(g), Want: 64},
		{What: "queue's size", Got: unsafe.Sizeof(q), Want: 128},
	})
	s := &Switch{}
	testenv.OnLines(t, fmt.Sprintf("a Port (%d bytes)", unsafe.Sizeof(pt)), func() unsafe.Pointer {
		return unsafe.Pointer(newPort(s, 0, PortSpec{}))
	})
}
