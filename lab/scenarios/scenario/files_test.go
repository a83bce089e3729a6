package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// TestBadFiles checks each testdata/bad file against its "# want: LINE:COL
// message" headers: the same number of errors, each at exactly that
// position and containing that message.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) < 12 {
		t.Fatalf("want at least 12 bad files, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var wants []string
			for _, l := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(l, "# want: "); ok {
					wants = append(wants, w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("no # want: header")
			}
			_, err = Parse(f, data)
			var list topologies.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse: got %v, want an ErrorList", err)
			}
			if len(list) != len(wants) {
				t.Errorf("got %d errors, want %d:\n%v", len(list), len(wants), err)
			}
			for i, w := range wants {
				pos, msg, _ := strings.Cut(w, " ")
				if i >= len(list) {
					break
				}
				e := list[i]
				if got := fmt.Sprintf("%d:%d", e.Line, e.Col); got != pos || e.File != f || !strings.Contains(e.Msg, msg) {
					t.Errorf("error %d:\n got %s\nwant %s:%s: …%s…", i, e, f, pos, msg)
				}
			}
		})
	}
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
