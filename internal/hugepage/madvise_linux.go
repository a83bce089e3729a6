package hugepage

import "golang.org/x/sys/unix"

const (
	madvHugepage = unix.MADV_HUGEPAGE
	madvCollapse = unix.MADV_COLLAPSE // Linux 6.1
)

// madvise takes the range as integers: these mappings are not Go objects.
func madvise(start, n uintptr, advice int) error {
	if _, _, e := unix.Syscall(unix.SYS_MADVISE, start, n, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}
