package chakra

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: whatever bytes a trace file holds, Read returns a trace or an
// ErrorList naming the file — no panic, no other error, and no endless
// read (the reader is bounded by the input).
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.et"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Read(bytes.NewReader(b), "fuzz.0.et", 0)
		if err == nil && tr == nil {
			t.Fatal("no trace and no error")
		}
		var el ErrorList
		if err != nil && !errors.As(err, &el) {
			t.Fatalf("error %T %v: want an ErrorList", err, err)
		}
	})
}
