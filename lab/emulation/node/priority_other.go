//go:build !linux

package node

import "errors"

// DefaultNice is the scheduling priority node processes ask for.
const DefaultNice = -10

// RaisePriority is only implemented on Linux.
func RaisePriority(nice int) error { return errors.New("raise priority: not supported on this OS") }
