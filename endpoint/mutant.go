package endpoint

import (
	"errors"
	"fmt"
)

// Mutant is a set of deliberate defects of the reference endpoint, each
// breaking one requirement of docs/metaroce-spec.md. They exist only so that
// the compliance suite can prove it catches them (lab/compliance/inproc's
// mutation test). Options.Mutant is set only by tests and by an endpoint
// node whose config has the test-only "mutant" field, which the hidden
// `rocelab compliance --iut node --mutant NAME` flag writes.
//
// The defects are compiled in only with the build tag rocelab_mutants
// (MutantsBuilt): without it, the shipped build, every mutant check is a
// constant false that the compiler removes from the hot paths, and a NIC
// asked for a mutant refuses to start.
type Mutant uint64

// The mutants.
const (
	MutNoCNPRateLimit      Mutant = 1 << iota // MR-5.18: a CNP for every CE mark
	MutCNPPerQP                               // MR-5.19: the CNP limit per QP, not per sender port
	MutSACKBitmapOff1                         // MR-2.5: SACK bitmap bit 0 names C+1 instead of C+2
	MutGoBackNInMeta                          // MR-4.10: MetaRoCE resends everything after a hole
	MutWrongNAKSyndrome                       // MR-5.1: remote access faults NAKed as remote operational error
	MutIgnorePFC                              // MR-8.2: PFC frames ignored
	MutNoFallback                             // MR-3.4: HELLO retried forever, never RoCEv2
	MutRTO10x                                 // MR-4.13: retransmission timer 10× too long
	MutAcceptBadICRC                          // MR-8.4: frames with a bad ICRC accepted
	MutNoBackoff                              // MR-4.14: the timeout never doubles
	MutRetryForever                           // MR-4.15: RetryCount ignored
	MutIgnoreRNRTimer                         // MR-4.17: resend at once after an RNR NAK
	MutNAKEveryOOO                            // MR-5.8: a NAK for every out-of-sequence packet
	MutGoBackSkipOne                          // MR-4.7: go-back-N resumes one PSN after the NAK's
	MutNoDupReACK                             // MR-5.7: duplicates silently dropped
	MutNoAckReqLast                           // MR-4.3: no AckReq on the last packet of a message
	MutNoTrimFlag                             // MR-5.16: a trimmed packet answered without TRIM
	MutIgnoreTrim                             // MR-4.11: SACK TRIM ignored (loss left to the timeout)
	MutNoOOOPlacement                         // MR-5.11: MetaRoCE drops packets past a hole
	MutHelloInRoCEv2                          // MR-3.5: a RoCEv2 QP answers HELLO
	MutNoRNRNAK                               // MR-5.5: no receive WQE answered NAK invalid request
	MutSinglePath                             // MR-6.1: a multipath QP sends on path 0 only
	MutNoReselect                             // MR-6.4: a timeout keeps the path's port
	MutCNPNoEcho                              // MR-5.17: CNP from the QP's own port, not the marked packet's
	MutDataNotECT                             // MR-1.1: data sent Not-ECT
	MutAckCoalesce64                          // MR-5.9: an ACK only every 64 packets
	MutWindow8192                             // MR-4.2: 8192 PSNs in flight
	MutWrongErrStatus                         // MR-4.19: every error NAK completes as remote operational error
	MutEarlyMeta                              // MR-3.2: requests sent before the negotiation concluded
	MutReadNoReorder                          // MR-4.8: RoCEv2 READ responses out of order are placed
	MutPSNNoWrap                              // MR-1.7: PSN distances computed without the 24-bit wrap
	MutUDAnyQKey                              // MR-11.3: a UD QP takes datagrams of any Q_Key
	MutUDNoGRH                                // MR-11.2: a UD receive places the payload with no GRH before it
	MutAtomicReexecute                        // MR-12.3: a duplicate atomic request is executed again
	MutAtomicNoAccessCheck                    // MR-12.2: atomics run on regions without remote-atomic access
	MutCMDropUnknownREQ                       // MR-13.2: a REQ for an unlistened service goes unanswered
	MutCMNoREQRetry                           // MR-13.6: an unanswered REQ is never sent again
	MutCMNoREPRetry                           // MR-13.4: a REP whose RTU is lost is never sent again
	MutCMDupREQNew                            // MR-13.3: a REQ sent again makes a second connection
	MutCMREPWrongRemoteID                     // MR-13.1: the REP names another RemoteCommID than the REQ's LocalCommID
	MutCMIgnoreMRA                            // MR-13.7: an MRA does not extend the REQ's wait
	MutCMNoDREP                               // MR-13.5: a DREQ goes unanswered
	MutCMSIDRWrongStatus                      // MR-13.8: a SIDR_REQ for an unlistened service gets status 2, not 1
	MutFIFOLoss                               // MR-4.10: a packet overtaken on its path is lost at once (no reordering window)
	mutEnd
)

var mutantNames = [...]string{"no-cnp-rate-limit", "cnp-per-qp", "sack-bitmap-off-by-one", "go-back-n-in-metaroce",
	"wrong-nak-syndrome", "ignore-pfc", "no-fallback", "rto-10x", "accept-bad-icrc", "no-backoff", "retry-forever",
	"ignore-rnr-timer", "nak-every-ooo", "go-back-skip-one", "no-dup-reack", "no-ackreq-last", "no-trim-flag",
	"ignore-trim", "no-ooo-placement", "hello-in-rocev2", "no-rnr-nak", "single-path", "no-reselect", "cnp-no-echo",
	"data-not-ect", "ack-coalesce-64", "window-8192", "wrong-error-status", "early-metaroce", "read-no-reorder", "psn-no-wrap",
	"ud-any-qkey", "ud-no-grh", "atomic-reexecute", "atomic-no-access-check",
	"cm-drop-unknown-req", "cm-no-req-retry", "cm-no-rep-retry", "cm-dup-req-new", "cm-rep-wrong-remote-id", "cm-ignore-mra",
	"cm-no-drep", "cm-sidr-wrong-status", "fifo-loss"}

// Mutants returns every single mutant.
func Mutants() []Mutant {
	var out []Mutant
	for m := Mutant(1); m < mutEnd; m <<= 1 {
		out = append(out, m)
	}
	return out
}

func (m Mutant) String() string {
	for i := range mutantNames {
		if m == 1<<i {
			return mutantNames[i]
		}
	}
	return "mutants"
}

// ParseMutant returns the mutant named name (as String prints it).
func ParseMutant(name string) (Mutant, error) {
	for i, n := range mutantNames {
		if n == name {
			return 1 << i, nil
		}
	}
	return 0, fmt.Errorf("unknown mutant %q", name)
}

// ErrNoMutants is NewNIC's error for a mutant asked of a build without
// them.
var ErrNoMutants = errors.New("this build has no compliance mutants (build it with -tags rocelab_mutants)")
