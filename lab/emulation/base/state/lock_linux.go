package state

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on path (created 0600). It retries if
// the file was unlinked (a concurrent Remove) between open and lock, so
// the lock it returns is always on the file that is at path.
func lockFile(path string, wait bool) (func() error, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, err
		}
		how := unix.LOCK_EX
		if !wait {
			how |= unix.LOCK_NB
		}
		for {
			err = unix.Flock(int(f.Fd()), how)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, ErrBusy
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		var held, cur unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &cur) == nil && held.Ino == cur.Ino && held.Dev == cur.Dev {
			return f.Close, nil // closing the file releases the lock
		}
		f.Close() // the lab was removed under us: lock the new file
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
}
