// Package golden checks files that must fail to load against the errors
// they declare: each file starts with one "# want: LINE:COL message" line
// per error it must give.
package golden

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BadFiles checks every file matching glob (at least least of them) in a
// subtest: load must fail with a list L whose errors are the file's
// "# want:" lines, in order, each formatted "FILE:LINE:COL: message" with
// that file and position and a message containing the wanted one.
func BadFiles[L interface {
	~[]E
	error
}, E error](t *testing.T, glob string, least int, load func(file string, data []byte) error) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) < least {
		t.Fatalf("want at least %d bad files, have %d (%v)", least, len(files), err)
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
				t.Fatal("no # want: lines")
			}
			err = load(f, data)
			var list L
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want a %T", err, list)
			}
			if len(list) != len(wants) {
				t.Errorf("got %d errors, want %d:\n%v", len(list), len(wants), err)
			}
			for i, w := range wants[:min(len(wants), len(list))] {
				pos, msg, _ := strings.Cut(w, " ")
				got, ok := strings.CutPrefix(list[i].Error(), f+":"+pos+": ")
				if !ok || !strings.Contains(got, msg) {
					t.Errorf("error %d:\n got %v\nwant %s:%s: …%s…", i, list[i], f, pos, msg)
				}
			}
		})
	}
}
