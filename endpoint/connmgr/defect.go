package connmgr

// Defect is a deliberate fault of the manager. Defects exist only so that
// the compliance suite can prove its CM cases catch them: endpoint.NIC's
// StartCM sets Config.Defects from the NIC's CM mutants (endpoint.Mutant).
// They take effect only in a build with the tag rocelab_mutants; in every
// other build Config.Defects is ignored and the checks compile away.
type Defect uint16

// The defects, each breaking one requirement of docs/metaroce-spec.md §13.
const (
	DefectDropUnknownREQ   Defect = 1 << iota // MR-13.2: a REQ for a service nobody listens on goes unanswered
	DefectNoREQRetry                          // MR-13.6: a REQ is sent once, never again
	DefectNoREPRetry                          // MR-13.4: a REP is sent once, never again
	DefectDupREQNew                           // MR-13.3: a REQ sent again is taken as a new request
	DefectREPWrongRemoteID                    // MR-13.1: the REP's RemoteCommID is not the REQ's LocalCommID
	DefectIgnoreMRA                           // MR-13.7: an MRA does not extend the wait
	DefectNoDREP                              // MR-13.5: a DREQ goes unanswered
	DefectSIDRWrongStatus                     // MR-13.8: a SIDR_REQ for an unknown service is refused as rejected (2), not 1
)
