// Package none is the null congestion control: every flow sends at the
// NIC's line rate with no window, leaving congestion to PFC (lossless
// classes) or to loss recovery. It takes no parameters and has no receiver
// side.
package none

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// Name is the registry name of this algorithm.
const Name = "none"

// Algorithm builds null controllers: senders that always allow line rate,
// and no receiver side. It takes no parameters.
func Algorithm() cc.Algorithm { return cc.NewScheme(Name, noParams, newSender, nil) }

func noParams(env cc.Env) (struct{}, error) { return struct{}{}, cc.NewParams(Name, env.Params).Err() }

func newSender(env cc.Env, _ struct{}) (cc.Sender, error) {
	if env.LineRate <= 0 {
		return nil, fmt.Errorf("%s: line rate must be positive, got %d", Name, env.LineRate)
	}
	return &Sender{rate: env.LineRate}, nil
}

// Sender sends at line rate and ignores every signal.
type Sender struct{ rate clock.Rate }

var _ cc.Sender = (*Sender)(nil)

// Rate returns the line rate.
func (s *Sender) Rate() clock.Rate { return s.rate }

// Allowance returns cc.Unlimited.
func (s *Sender) Allowance() int64 { return cc.Unlimited }

// OnSend does nothing.
func (s *Sender) OnSend(int) {}

// OnFeedback does nothing.
func (s *Sender) OnFeedback(cc.Feedback) {}

// Close does nothing.
func (s *Sender) Close() {}
