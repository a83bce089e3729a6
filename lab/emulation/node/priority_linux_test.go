package node

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rocelab/rocelab/internal/testenv"
)

func TestRaisePriority(t *testing.T) {
	testenv.RequireRoot(t)
	// Restore the test process's own priority afterwards.
	before, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { RaisePriority(20 - before) })
	if err := RaisePriority(-5); err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		// getpriority returns 20 - nice for PRIO_PROCESS on Linux.
		p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil {
			continue // the thread exited
		}
		if nice := 20 - p; nice != -5 {
			t.Errorf("thread %d: nice %d, want -5", tid, nice)
		}
	}
}
