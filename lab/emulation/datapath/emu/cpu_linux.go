package emu

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the loop's thread while Run holds it;
// call it on the loop goroutine.
func (l *Loop) threadCPU() (time.Duration, bool) {
	if !l.stats.cpuOK {
		return 0, false
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
