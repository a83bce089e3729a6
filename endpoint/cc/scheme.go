package cc

import "fmt"

// Scheme assembles an Algorithm from a name, a parser of the algorithm's
// parameters and builders of its two sides over the parsed configuration.
// It is the one place that parses an Env's parameters before either side is
// built, so a misspelt parameter is refused the same way for every scheme,
// on both sides.
type Scheme[C any] struct {
	ID       string
	Parse    func(Env) (C, error)
	Sender   func(Env, C) (Sender, error)
	Receiver func(Env, C) (Receiver, error) // nil: a sender-only scheme
}

var _ Algorithm = Scheme[struct{}]{}

// NewScheme returns the Scheme of those parts; receiver is nil for a
// sender-only scheme.
func NewScheme[C any](id string, parse func(Env) (C, error), sender func(Env, C) (Sender, error), receiver func(Env, C) (Receiver, error)) Scheme[C] {
	return Scheme[C]{ID: id, Parse: parse, Sender: sender, Receiver: receiver}
}

// Name returns the scheme's ID.
func (s Scheme[C]) Name() string { return s.ID }

// NewSender parses env's parameters and builds the sender side of one flow.
func (s Scheme[C]) NewSender(env Env) (Sender, error) {
	c, err := s.Parse(env)
	if err != nil {
		return nil, err
	}
	return s.Sender(env, c)
}

// NewReceiver parses env's parameters and builds the receiver side, or
// returns nil, nil for a sender-only scheme once the parameters parse.
func (s Scheme[C]) NewReceiver(env Env) (Receiver, error) {
	c, err := s.Parse(env)
	if err != nil || s.Receiver == nil {
		return nil, err
	}
	return s.Receiver(env, c)
}

// NeedSched returns an error naming the scheme when env has no scheduler.
func (env Env) NeedSched(scheme string) error {
	if env.Sched == nil {
		return fmt.Errorf("%s: no scheduler", scheme)
	}
	return nil
}
