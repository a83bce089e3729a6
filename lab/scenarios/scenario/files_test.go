package scenario

import (
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/internal/golden"
	"github.com/rocelab/rocelab/topologies"
)

// TestBadFiles checks each testdata/bad file against its "# want:
// LINE:COL message" lines.
func TestBadFiles(t *testing.T) {
	golden.BadFiles[topologies.ErrorList](t, "testdata/bad/*.yaml", 12, func(f string, data []byte) error {
		_, err := Parse(f, data)
		return err
	})
}

// TestGoodFiles checks that every example parses.
func TestGoodFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	if len(files) == 0 {
		t.Fatal("no good files")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
