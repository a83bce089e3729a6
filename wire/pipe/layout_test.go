package pipe

import (
	"testing"
	"unsafe"

	"github.com/rocelab/rocelab/core/sim"
)

// TestPipeLayout holds the layout a hop's two cache lines rest on (see
// Pipe): what put and Handle read in line 0, the inline ring in line 1,
// and pipes allocated on a line.
func TestPipeLayout(t *testing.T) {
	var l Pipe
	checks := []struct {
		what      string
		got, want uintptr
	}{
		{"Pipe's size", unsafe.Sizeof(l), 192},
		{"Pipe.n's line", unsafe.Offsetof(l.n) / 64, 0},
		{"Pipe.delay's line", unsafe.Offsetof(l.delay) / 64, 0},
		{"Pipe.inline's offset", unsafe.Offsetof(l.inline), 64},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
	e := sim.New(1)
	for range 16 {
		if a := uintptr(unsafe.Pointer(New(e, 1, nil))); a%64 != 0 {
			t.Fatalf("a Pipe allocated at %#x, not on a 64-byte line", a)
		}
	}
}
