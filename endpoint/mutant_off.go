//go:build !rocelab_mutants

package endpoint

// MutantsBuilt says whether this build carries the compliance mutants.
const MutantsBuilt = false

// mut is false: the shipped build carries no mutant, and the branches
// that test for one compile away.
func (n *NIC) mut(Mutant) bool { return false }
