package prefetch

import (
	"testing"
	"unsafe"
)

// TestLineNeverFaults: a prefetch is a hint, so asking for nil, for an
// address past an object's end, or for a live object must neither fault nor
// change memory.
func TestLineNeverFaults(t *testing.T) {
	x := [8]uint64{1, 2, 3, 4, 5, 6, 7, 8}
	tests := []struct {
		name string
		p    unsafe.Pointer
	}{
		{"nil", nil},
		{"past the end of an object", unsafe.Add(unsafe.Pointer(&x[7]), 1<<20)},
		{"a live object", unsafe.Pointer(&x[3])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Line(tt.p)
		})
	}
	if x != [8]uint64{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Errorf("prefetching changed memory: %v", x)
	}
}
