package pipe

import (
	"testing"
	"unsafe"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/internal/testenv"
)

// TestPipeLayout holds the layout a hop's two cache lines rest on (see
// Pipe): what put and Handle read in line 0, the inline ring in line 1,
// and pipes allocated on a line.
func TestPipeLayout(t *testing.T) {
	var l Pipe
	testenv.CheckLayout(t, []testenv.Layout{
		{What: "Pipe's size", Got: unsafe.Sizeof(l), Want: 192},
		{What: "Pipe.n's line", Got: unsafe.Offsetof(l.n) / 64, Want: 0},
		{What: "Pipe.delay's line", Got: unsafe.Offsetof(l.delay) / 64, Want: 0},
		{What: "Pipe.inline's offset", Got: unsafe.Offsetof(l.inline), Want: 64},
	})
	e := sim.New(1)
	testenv.OnLines(t, "a Pipe", func() unsafe.Pointer { return unsafe.Pointer(New(e, 1, nil)) })
}
