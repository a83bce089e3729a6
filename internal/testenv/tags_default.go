//go:build !rocelab_mutants

package testenv

// buildTags are the tags this test binary was built with that the rocelab
// command it builds must share (none: the shipped build).
const buildTags = ""
