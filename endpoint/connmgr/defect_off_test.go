//go:build !rocelab_mutants

package connmgr

import "testing"

// TestDefectsIgnored: the shipped build has no defects, whatever
// Config.Defects says.
func TestDefectsIgnored(t *testing.T) {
	for _, tc := range defectCases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLone(t, tc.d)
			tc.play(t, l)
			if !tc.sound(l) {
				t.Errorf("Config.Defects took effect in a build without mutants: sent %v, events %v", l.sent, l.evs)
			}
		})
	}
}
