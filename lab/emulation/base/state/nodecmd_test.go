package state

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNodeCommand(t *testing.T) {
	tests := []struct {
		name string
		slim os.FileMode // 0: no rocelab-node beside rocelab
		want func(dir string) []string
	}{
		{"slim binary beside rocelab", 0o755, func(dir string) []string {
			return []string{filepath.Join(dir, NodeBinary), "--config", "n.json"}
		}},
		{"no slim binary", 0, func(dir string) []string {
			return []string{filepath.Join(dir, "rocelab"), "node", "--config", "n.json"}
		}},
		{"slim file not executable", 0o644, func(dir string) []string {
			return []string{filepath.Join(dir, "rocelab"), "node", "--config", "n.json"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.slim != 0 {
				if err := os.WriteFile(filepath.Join(dir, NodeBinary), []byte("#!/bin/sh\n"), tc.slim); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := NodeCommand(filepath.Join(dir, "rocelab"), "n.json"), tc.want(dir); !slices.Equal(got, want) {
				t.Errorf("Command = %q, want %q", got, want)
			}
		})
	}
}
