package endpoint

import (
	"encoding/json"
	"testing"
)

// TestModeText: a mode is its name in JSON (the node API's and reports'),
// both ways; an unknown name is an error.
func TestModeText(t *testing.T) {
	for _, tc := range []struct {
		m    Mode
		json string
	}{{ModeRoCEv2, `"rocev2"`}, {ModeMetaRoCE, `"metaroce"`}} {
		b, err := json.Marshal(tc.m)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.m, b, err, tc.json)
		}
		var back Mode
		if err := json.Unmarshal(b, &back); err != nil || back != tc.m {
			t.Errorf("Unmarshal(%s) = %v, %v", b, back, err)
		}
	}
	var m Mode
	if err := json.Unmarshal([]byte(`"ib"`), &m); err == nil {
		t.Error(`"ib" accepted as a mode`)
	}
}
