package simlab

import (
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// build loads a builtin topology and builds a lab on it.
func build(t *testing.T, topo string, opts Options) *Lab {
	t.Helper()
	tp, err := topologies.Builtin(topo)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Build(tp, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
