package topologies

import (
	"errors"
	"testing"

	"github.com/rocelab/rocelab/internal/golden"
)

// TestBadFiles checks each testdata/bad file against its "# want:
// LINE:COL message" lines.
func TestBadFiles(t *testing.T) {
	golden.BadFiles[ErrorList](t, "testdata/bad/*.yaml", 12, func(f string, _ []byte) error {
		_, err := Load(f)
		return err
	})
}

func TestErrorsSorted(t *testing.T) {
	_, err := Load("testdata/bad/many-errors.yaml")
	var el ErrorList
	if !errors.As(err, &el) {
		t.Fatal(err)
	}
	for i := 1; i < len(el); i++ {
		if el[i-1].Line > el[i].Line || el[i-1].Line == el[i].Line && el[i-1].Col > el[i].Col {
			t.Errorf("errors not sorted: %v before %v", el[i-1], el[i])
		}
	}
}
