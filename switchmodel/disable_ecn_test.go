package switchmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDisableECN: the switch-side misconfiguration turns WRED off on the
// classes named, or on all of them.
func TestDisableECN(t *testing.T) {
	for _, tc := range []struct {
		name string
		tcs  []int
	}{{"all", nil}, {"tc3", []int{3}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DisableECN(tc.tcs...)
			want := DefaultConfig()
			want.ECN[3].Enabled = false
			if diff := cmp.Diff(want, c); diff != "" {
				t.Error(diff)
			}
		})
	}
	c := DefaultConfig()
	c.DisableECN(5)
	if !c.ECN[3].Enabled {
		t.Error("DisableECN(5) turned TC3 off")
	}
}
