package testenv

import (
	"testing"
	"unsafe"
)

// Layout is one expectation of a test that holds a struct's cache-line
// layout: a field's offset or line, or a type's size.
type Layout struct {
	What      string
	Got, Want uintptr
}

// CheckLayout reports every expectation whose Got is not its Want.
func CheckLayout(t testing.TB, checks []Layout) {
	t.Helper()
	for _, c := range checks {
		if c.Got != c.Want {
			t.Errorf("%s = %d, want %d", c.What, c.Got, c.Want)
		}
	}
}

// OnLines fails unless 16 objects from alloc each start on a 64-byte
// cache line.
func OnLines(t testing.TB, what string, alloc func() unsafe.Pointer) {
	t.Helper()
	for range 16 {
		if a := uintptr(alloc()); a%64 != 0 {
			t.Fatalf("%s allocated at %#x, not on a 64-byte line", what, a)
		}
	}
}
