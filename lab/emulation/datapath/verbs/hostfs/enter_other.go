//go:build !linux

package hostfs

import "errors"

// Enter needs Linux's mount namespaces.
func Enter(devs []Device) error { return errors.New("hostfs: needs Linux") }
