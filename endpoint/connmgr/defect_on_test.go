//go:build rocelab_mutants

package connmgr

import "testing"

// TestMutantDefects: each defect changes what the manager does, and the
// same exchange without it is sound.
func TestMutantDefects(t *testing.T) {
	for _, tc := range defectCases {
		t.Run(tc.name, func(t *testing.T) {
			sound := newLone(t, 0)
			tc.play(t, sound)
			if !tc.sound(sound) {
				t.Errorf("without the defect: sent %v, events %v", sound.sent, sound.evs)
			}
			bad := newLone(t, tc.d)
			tc.play(t, bad)
			if tc.sound(bad) {
				t.Errorf("with the defect the manager is sound: sent %v, events %v", bad.sent, bad.evs)
			}
		})
	}
}
