package topologies

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each testdata/bad file starts with one "# want: LINE:COL message" line per
// expected error; the file must give exactly these errors.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) < 12 {
		t.Fatalf("want at least 12 bad files, have %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var wants []string
			sc := bufio.NewScanner(bytes.NewReader(data))
			for sc.Scan() {
				if w, ok := strings.CutPrefix(sc.Text(), "# want: "); ok {
					wants = append(wants, w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("no # want: lines")
			}
			_, err = Load(f)
			var el ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("Load = %v, want an ErrorList", err)
			}
			if len(el) != len(wants) {
				t.Errorf("got %d errors, want %d:\n%v", len(el), len(wants), err)
			}
			for _, w := range wants {
				lc, msg, _ := strings.Cut(w, " ")
				found := false
				for _, e := range el {
					if fmt.Sprintf("%d:%d", e.Line, e.Col) == lc && strings.Contains(e.Msg, msg) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing error %s: %s\ngot:\n%v", lc, msg, err)
				}
			}
			for _, e := range el {
				if prefix := f + ":"; !strings.HasPrefix(e.Error(), prefix) {
					t.Errorf("error %q does not start with %q", e.Error(), prefix)
				}
			}
		})
	}
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
