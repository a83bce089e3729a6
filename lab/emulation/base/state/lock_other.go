//go:build !linux

package state

import "errors"

func lockFile(path string, wait bool) (func() error, error) {
	return nil, errors.New("lab state locking is only implemented on Linux")
}
