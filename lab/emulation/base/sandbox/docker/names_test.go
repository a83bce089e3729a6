package docker

import (
	"strings"
	"testing"
)

func TestContainerName(t *testing.T) {
	long := strings.Repeat("n", 70)
	tests := []struct {
		lab, node string
		want      string // "" = hashed
	}{
		{"lab1", "leaf0", "rl-lab1-leaf0"},
		{"a.b_c-d", "gpu-3.1", "rl-a.b_c-d-gpu-3.1"},
		{"lab1", long, ""},
		{"lab1", "has space", ""},
		{"lab1", "colon:node", ""},
		{"lab1", "ünï", ""},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		got := ContainerName(tc.lab, tc.node)
		if tc.want != "" && got != tc.want {
			t.Errorf("ContainerName(%q, %q) = %q, want %q", tc.lab, tc.node, got, tc.want)
		}
		if tc.want == "" && !strings.HasPrefix(got, "rl-"+tc.lab+"-h") {
			t.Errorf("ContainerName(%q, %q) = %q, want a hashed name", tc.lab, tc.node, got)
		}
		if len(got) > maxName || !dockerNameRE.MatchString(got) {
			t.Errorf("ContainerName(%q, %q) = %q: not a valid container name of at most %d characters", tc.lab, tc.node, got, maxName)
		}
		if seen[got] {
			t.Errorf("ContainerName(%q, %q) = %q twice", tc.lab, tc.node, got)
		}
		seen[got] = true
	}
	if a, b := ContainerName("lab1", long), ContainerName("lab1", long+"x"); a == b {
		t.Errorf("two long node names hash to the same name %q", a)
	}
}
