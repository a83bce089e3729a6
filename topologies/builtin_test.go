package topologies

import (
	"testing"
)

func TestBuiltinsValidate(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			topo, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			s := topo.Summary()
			t.Logf("%+v", s)
			if s.Hosts == 0 || s.Switches == 0 || s.Links == 0 {
				t.Errorf("summary %+v: empty topology", s)
			}
		})
	}
}
