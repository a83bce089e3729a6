//go:build rocelab_mutants

package testenv

// buildTags are the tags this test binary was built with that the rocelab
// command it builds must share: a mutation test's node runs a mutant.
const buildTags = "rocelab_mutants"
