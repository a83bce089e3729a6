package prefetch

import "unsafe"

// Line asks for the cache line holding p. It never faults: a nil or
// stale p only wastes the request.
//
//go:noescape
func Line(p unsafe.Pointer)
