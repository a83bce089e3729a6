package readcap_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocelab/rocelab/internal/readcap"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "exact")
	over := filepath.Join(dir, "over")
	os.WriteFile(exact, []byte(strings.Repeat("x", 100)), 0o644)
	os.WriteFile(over, []byte(strings.Repeat("x", 101)), 0o644)
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() { // a writer that never stops: the cap ends the read
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		b := make([]byte, 4096)
		for {
			if _, err := f.Write(b); err != nil {
				return
			}
		}
	}()
	for _, c := range []struct {
		path string
		want string // "" for success
	}{
		{exact, ""},
		{over, "file too large: 101 bytes, a test file may be at most 100 bytes"},
		{zero, "not a file a test file can be read from (a character device)"},
		{dir, "not a file a test file can be read from (a directory)"},
		{fifo, "file too large: more than 100 bytes"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		b, err := readcap.ReadFile(c.path, 100, "test file")
		switch {
		case c.want == "" && (err != nil || len(b) != 100):
			t.Errorf("%s: %d bytes, %v; want 100 bytes", c.path, len(b), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error containing %q", c.path, err, c.want)
		case strings.Contains(c.want, "too large") && !errors.Is(err, readcap.ErrTooLarge):
			t.Errorf("%s: %v does not wrap ErrTooLarge", c.path, err)
		}
	}
}
