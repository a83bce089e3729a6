//go:build !linux

package emu

import "time"

// threadCPU is only known on Linux.
func (l *Loop) threadCPU() (time.Duration, bool) { return 0, false }
