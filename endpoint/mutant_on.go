//go:build rocelab_mutants

package endpoint

// MutantsBuilt says whether this build carries the compliance mutants.
const MutantsBuilt = true

// mut reports whether the NIC carries mutant m.
func (n *NIC) mut(m Mutant) bool { return n.opts.Mutant&m != 0 }
