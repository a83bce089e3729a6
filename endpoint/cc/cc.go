// Package cc defines the congestion-control interface of the MetaRoCE
// endpoint and the registry of algorithms. Each algorithm lives in its own
// sub-package (cc/dcqcn, cc/credit, cc/none: line rate, no control) and is
// a pure model: it reads time and asks for callbacks only through the
// clock.Scheduler it is handed.
//
// A sender-side controller (Sender) governs one flow — a QP, or one path of a
// multipath MetaRoCE QP — at the reaction point: it sets the pacing rate and,
// for window/credit schemes, how many bytes may leave. A receiver-side
// controller (Receiver) exists only for receiver-driven schemes: it sees data
// arrive and decides which sender to grant how many bytes next.
package cc

import (
	"fmt"
	"sort"

	"github.com/rocelab/rocelab/core/clock"
)

// FeedbackKind says what congestion signal reached the sender.
type FeedbackKind uint8

// Kinds of feedback.
const (
	CNP    FeedbackKind = iota + 1 // a RoCEv2 CNP for this flow
	Ack                            // bytes acknowledged (Bytes), with the ECN echo if any
	Loss                           // a loss was detected (NAK, SACK hole or timeout)
	Credit                         // a receiver granted Bytes more
	RTT                            // an RTT sample (RTT)
)

// Feedback is one congestion signal.
type Feedback struct {
	Kind  FeedbackKind
	Bytes int64
	RTT   clock.Duration
}

// Sender is the reaction point of one flow.
type Sender interface {
	// Rate is the rate the flow may send at now; the NIC paces to it.
	Rate() clock.Rate
	// Allowance is how many more bytes may leave before more credit or
	// window opens; rate-only schemes return a very large number.
	Allowance() int64
	// OnSend tells the controller that n bytes (a whole frame) left.
	OnSend(n int)
	// OnFeedback delivers a congestion signal.
	OnFeedback(f Feedback)
	// Close cancels the controller's timers.
	Close()
}

// Grant is a receiver's decision to let one sender send Bytes more.
type Grant struct {
	Flow  uint32
	Bytes int64
}

// Receiver is the receiver side of a receiver-driven scheme.
type Receiver interface {
	// OnRequest records that flow wants to send bytes more (its backlog).
	OnRequest(flow uint32, bytes int64)
	// OnData records that n bytes of flow arrived, and whether they were CE-marked.
	OnData(flow uint32, n int, ce bool)
	// Close cancels the controller's timers.
	Close()
}

// Env is what a controller is built with.
type Env struct {
	Sched    clock.Scheduler
	LineRate clock.Rate // the NIC's line rate: the start rate and the ceiling
	MTU      int
	// SendGrant is how a Receiver emits a grant; the endpoint turns it into a
	// MetaRoCE credit packet on the high-priority class.
	SendGrant func(Grant)
	// Params holds algorithm-specific settings by name (from the scenario or
	// CLI); unknown names are an error at construction.
	Params map[string]string
}

// Algorithm builds controllers of one kind.
type Algorithm interface {
	Name() string
	NewSender(env Env) (Sender, error)
	// NewReceiver returns nil, nil for sender-only schemes.
	NewReceiver(env Env) (Receiver, error)
}

// Registry maps algorithm names to implementations. It is an explicit value,
// filled by whoever assembles the endpoint, not by init().
type Registry struct {
	algs map[string]Algorithm
}

// NewRegistry returns a registry holding algs.
func NewRegistry(algs ...Algorithm) *Registry {
	r := &Registry{algs: map[string]Algorithm{}}
	for _, a := range algs {
		r.algs[a.Name()] = a
	}
	return r
}

// Get returns the named algorithm or an error listing the known ones.
func (r *Registry) Get(name string) (Algorithm, error) {
	if a, ok := r.algs[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown congestion control %q (known: %v)", name, r.Names())
}

// Names lists the registered algorithms, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.algs))
	for n := range r.algs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
