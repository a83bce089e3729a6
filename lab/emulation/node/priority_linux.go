package node

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// DefaultNice is the scheduling priority node processes ask for. A node
// loop that the kernel leaves waiting is a stall in fabric time: on a busy
// two-core machine loops froze for 30–195 ms of wall clock (8–47 µs of
// fabric time at k = 4000), enough to overrun a port's PFC headroom. A
// nice value of −10 gives a node about nine times the CPU share of an
// ordinary process (a compiler, a test binary) when both want to run,
// without the starvation risks of a real-time class.
const DefaultNice = -10

// RaisePriority sets the nice value of every thread of this process.
// Linux applies nice per thread, and new threads inherit it from the
// thread that creates them, so setting it on all current threads covers
// the Go runtime's later ones too. It needs root (CAP_SYS_NICE); a
// container without that capability gets an error the caller may ignore.
func RaisePriority(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("raise priority: %w", err)
	}
	var errs []error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("thread %d: %w", tid, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raise priority to nice %d: %w", nice, err)
	}
	return nil
}
