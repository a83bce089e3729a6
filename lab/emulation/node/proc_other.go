//go:build !unix

package node

import "time"

// processCPU is not known here.
func processCPU() (user, sys time.Duration, ok bool) { return 0, 0, false }
