package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomic: a report replaces the previous one whole; a write that
// fails leaves no report at all — not half of the new one, and not the
// previous run's PASS beside a failing exit; a directory with other files
// in it is not emptied.
func TestWriteAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rep")
	ok := func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "summary.md"), []byte("PASS"), 0o644) }
	if err := writeAtomic(dir, ok); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "summary.md")); string(b) != "PASS" {
		t.Fatalf("summary.md %q after a good write", b)
	}
	boom := errors.New("disk full")
	err := writeAtomic(dir, func(tmp string) error {
		os.WriteFile(filepath.Join(tmp, "junit.xml"), []byte("<half"), 0o644)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed write returned %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after a failed write %s is still there (%v): the previous PASS stays beside a failing exit", dir, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 0 {
		t.Errorf("a failed write left %v in the parent", ents)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "thesis.tex"), []byte("mine"), 0o644)
	if err := writeAtomic(other, ok); err == nil {
		t.Errorf("a directory holding thesis.tex was replaced by a report")
	}
	if _, err := os.Stat(filepath.Join(other, "thesis.tex")); err != nil {
		t.Errorf("thesis.tex: %v", err)
	}
}
