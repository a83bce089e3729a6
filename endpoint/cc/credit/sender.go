package credit

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// Sender is the sending side of one credit flow: it may send what it was
// granted (plus the unscheduled window) at line rate.
type Sender struct {
	rate   clock.Rate
	credit int64 // total credit ever received, including the unscheduled window
	sent   int64
}

var _ cc.Sender = (*Sender)(nil)

// NewSender returns a sender holding cfg.Unscheduled bytes of credit.
func NewSender(line clock.Rate, cfg Config) *Sender {
	return &Sender{rate: line, credit: cfg.Unscheduled}
}

// Rate returns the line rate.
func (s *Sender) Rate() clock.Rate { return s.rate }

// Allowance returns credit − sent; it can be negative only if the endpoint
// sent a frame it had no credit for.
func (s *Sender) Allowance() int64 { return s.credit - s.sent }

// OnSend counts n bytes against the credit.
func (s *Sender) OnSend(n int) { s.sent += int64(n) }

// OnFeedback adds Credit grants; other kinds are ignored.
func (s *Sender) OnFeedback(f cc.Feedback) {
	if f.Kind == cc.Credit && f.Bytes > 0 {
		s.credit += f.Bytes
	}
}

// Close does nothing: the sender has no timers.
func (s *Sender) Close() {}
