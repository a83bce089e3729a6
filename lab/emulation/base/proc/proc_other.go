//go:build !linux

package proc

import (
	"errors"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

type procStat struct {
	state byte
	pgrp  int
	start uint64
}

var errUnsupported = errors.New("proc: only implemented on Linux")

func stat(pid int) (procStat, error) { return procStat{}, errUnsupported }

// Lookup returns the Process that has pid now.
func Lookup(pid int) (Process, error) { return Process{}, errUnsupported }

func (p Process) signalGroup(sig syscall.Signal) error { return errUnsupported }
