// Package readcap reads the files rocelab is given with a size bound: a
// file larger than its kind's cap (or one that never ends, /dev/zero) fails
// with an error naming the file and the cap before it is parsed or held in
// memory, and a device is refused before it is read at all.
package readcap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Caps of the files rocelab reads (a 65,535-node topology is about 3 MiB).
const (
	Config = 16 << 20 // topology and scenario files (YAML)
	Report = 1 << 30  // a report's metrics.json, which dashboard --replay reads
	Small  = 1 << 20  // tokens, layouts and other small files
)

// ErrTooLarge is the class of a file past its cap.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads the file at path, at most max bytes; what names the
// file's kind in errors ("topology").
func ReadFile(path string, max int64, what string) ([]byte, error) {
	f, err := Open(path, max, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// File is an open file whose reads fail once more than its cap was read.
type File struct {
	f    *os.File
	left int64
	max  int64
	what string
}

// Open opens the file at path for reading at most max bytes. A character
// or block device is refused (a topology that is /dev/zero); pipes and
// regular files are read.
func Open(path string, max int64, what string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := st.Mode(); m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0 || m.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: not a file a %s can be read from (%s)", path, what, kind(m))
	}
	if st.Mode().IsRegular() && st.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %s, a %s may be at most %s", path, ErrTooLarge, size(st.Size()), what, size(max))
	}
	return &File{f: f, left: max, max: max, what: what}, nil
}

// Read reads from the file; past the cap it fails with ErrTooLarge.
func (r *File) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// One byte more tells a file of exactly max bytes from a longer one.
		var b [1]byte
		if n, _ := r.f.Read(b[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%s: %w: more than %s, a %s may be at most %s", r.f.Name(), ErrTooLarge, size(r.max), r.what, size(r.max))
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	return n, err
}

// Close closes the file.
func (r *File) Close() error { return r.f.Close() }

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.String()
}

func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
