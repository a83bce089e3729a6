package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

const (
	sigTerm = unix.SIGTERM
	sigKill = unix.SIGKILL
)

type procStat struct {
	state byte
	pgrp  int
	start uint64
}

// stat reads /proc/pid/stat. The command name (field 2) is in parentheses
// and may itself contain spaces and parentheses, so parsing starts after
// the last ')'.
func stat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	return parseStat(b)
}

func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc stat: no ')'")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parse /proc stat: %d fields", len(f)+2)
	}
	pgrp, err := strconv.Atoi(string(f[2])) // field 5
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat pgrp: %w", err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64) // field 22
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat starttime: %w", err)
	}
	return procStat{state: f[0][0], pgrp: pgrp, start: start}, nil
}

// Lookup returns the Process that has pid now.
func Lookup(pid int) (Process, error) {
	st, err := stat(pid)
	if err != nil {
		return Process{}, err
	}
	return Process{PID: pid, StartTime: st.start}, nil
}

// Signal sends sig to p after checking that the PID still belongs to it.
func (p Process) Signal(sig unix.Signal) error {
	if !p.Alive() {
		return fmt.Errorf("signal %v: %w", p, ErrGone)
	}
	if err := unix.Kill(p.PID, sig); err != nil {
		if err == unix.ESRCH {
			return fmt.Errorf("signal %v: %w", p, ErrGone)
		}
		return fmt.Errorf("signal %v: %w", p, err)
	}
	return nil
}

// signalGroup signals p's process group if p leads it, else p alone.
// The check and the kill are not atomic, but a PID is not recycled while
// its process is a zombie, and a group ID is not reused while any member
// lives, which keeps the window to a process that exits and is reaped
// between the two calls and a new one getting the same ID in between.
func (p Process) signalGroup(sig unix.Signal) error {
	st, err := stat(p.PID)
	if err != nil || st.start != p.StartTime || st.state == 'Z' || st.state == 'X' {
		return fmt.Errorf("signal %v: %w", p, ErrGone)
	}
	target := p.PID
	if st.pgrp == p.PID {
		target = -p.PID
	}
	if err := unix.Kill(target, sig); err != nil {
		if err == unix.ESRCH {
			return fmt.Errorf("signal %v: %w", p, ErrGone)
		}
		return fmt.Errorf("signal %v: %w", p, err)
	}
	return nil
}
