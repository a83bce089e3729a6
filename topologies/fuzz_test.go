package topologies_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// FuzzParse: a topology file of any bytes — the ones users write, and the
// copy a lab keeps in its run directory and reads back — is parsed or
// refused, never a crash.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: x\nnodes:\n  a: {kind: host, gpus: 99999}\n"))
	f.Add([]byte("name: x\nlinks:\n  - {link: a -- b, count: -1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if tp, err := topologies.Parse("fuzz.yaml", b); err == nil && tp == nil {
			t.Fatal("no topology and no error")
		}
	})
}
