//go:build !linux

package hugepage

import "errors"

const (
	madvHugepage = 0
	madvCollapse = 0
)

func madvise(start, n uintptr, advice int) error {
	return errors.New("transparent huge pages are Linux only")
}
