// Package proc identifies processes by PID and start time, so that code
// which signals a recorded process (a lab's node, found again in a state
// file after the CLI that started it is gone) never hits a recycled PID.
//
// A Process is the pair (PID, StartTime), where StartTime is field 22 of
// /proc/PID/stat: the time the process started, in clock ticks since boot.
// Two processes never share both.
package proc

import (
	"errors"
	"fmt"
	"time"
)

// ErrGone means the process no longer exists: it exited (and was reaped or
// is a zombie), or its PID now belongs to another process.
var ErrGone = errors.New("process is gone")

// Process identifies a process.
type Process struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

// Alive reports whether p still runs (a zombie does not).
func (p Process) Alive() bool {
	st, err := stat(p.PID)
	return err == nil && st.start == p.StartTime && st.state != 'Z' && st.state != 'X'
}

func (p Process) String() string { return fmt.Sprintf("pid %d (start %d)", p.PID, p.StartTime) }

// Stop ends p: SIGTERM to its process group (nodes are started in their
// own group) and to p, then SIGKILL if it is still alive after grace. It
// returns nil once p is gone, including when it was gone before.
func (p Process) Stop(grace time.Duration) error {
	if err := p.signalGroup(sigTerm); errors.Is(err, ErrGone) {
		return nil
	} else if err != nil {
		return err
	}
	if p.wait(grace) {
		return nil
	}
	if err := p.signalGroup(sigKill); errors.Is(err, ErrGone) {
		return nil
	} else if err != nil {
		return err
	}
	if p.wait(2 * time.Second) {
		return nil
	}
	return fmt.Errorf("stop %v: still alive after SIGKILL", p)
}

func (p Process) wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for sleep := time.Millisecond; ; sleep = min(2*sleep, 50*time.Millisecond) {
		if !p.Alive() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(sleep)
	}
}
