//go:build unix

package node

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU returns the user and system CPU time of this process.
func processCPU() (user, sys time.Duration, ok bool) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
