package endpoint

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/slide"
)

// SRQ is a shared receive queue (as InfiniBand defines it): receive WQEs
// that every QP created with it (QPConfig.SRQ) takes from, in the order
// posted, when a message that needs one reaches that QP. A QP binds a WQE
// to its next receive sequence number as it takes it, so MetaRoCE's
// out-of-order placement finds the same WQE for a message however its
// packets arrive.
//
// A limit armed with SetLimit fires once, when the queue falls below it:
// OnLimit runs (the program's IBV_EVENT_SRQ_LIMIT_REACHED) and the limit
// is disarmed, as on a NIC.
type SRQ struct {
	pd   *PD
	q    []rwqe
	qBuf []rwqe
	max  int
	// limit is the armed limit (0: disarmed).
	limit int
	// OnLimit, if set, runs when an armed limit is reached.
	OnLimit func()
	users   int // QPs created with it, not yet destroyed
	dead    bool
}

// SRQConfig configures an SRQ.
type SRQConfig struct {
	// MaxWR bounds the queue (default 4096).
	MaxWR int
	// Limit arms the limit at once (0: disarmed).
	Limit int
}

// CreateSRQ creates a shared receive queue in pd.
func (pd *PD) CreateSRQ(cfg SRQConfig) (*SRQ, error) {
	if cfg.MaxWR <= 0 {
		cfg.MaxWR = 4096
	}
	if cfg.Limit < 0 || cfg.Limit > cfg.MaxWR {
		return nil, fmt.Errorf("create SRQ: limit %d outside 0…%d", cfg.Limit, cfg.MaxWR)
	}
	return &SRQ{pd: pd, max: cfg.MaxWR, limit: cfg.Limit}, nil
}

// errSRQGone is what a destroyed SRQ answers.
var errSRQGone = errors.New("SRQ destroyed")

// PostRecv queues a receive buffer on the SRQ.
func (s *SRQ) PostRecv(wr RecvWR) error {
	if s.dead {
		return errSRQGone
	}
	if len(s.q) >= s.max {
		return errors.New("SRQ full")
	}
	e, err := newRWQE(s.pd.nic, s.pd, wr)
	if err != nil {
		return fmt.Errorf("SRQ post recv: %w", err)
	}
	slide.Append(&s.q, &s.qBuf, e)
	return nil
}

// Len is how many WQEs the queue holds.
func (s *SRQ) Len() int { return len(s.q) }

// MaxWR is the queue's bound.
func (s *SRQ) MaxWR() int { return s.max }

// Limit is the armed limit (0: disarmed).
func (s *SRQ) Limit() int { return s.limit }

// SetLimit arms the limit (0 disarms it). It fires when a QP takes a WQE
// and leaves fewer than limit behind.
func (s *SRQ) SetLimit(limit int) error {
	if limit < 0 || limit > s.max {
		return fmt.Errorf("SRQ limit %d outside 0…%d", limit, s.max)
	}
	s.limit = limit
	return nil
}

// Resize sets the queue's bound; it may not fall below what it holds.
func (s *SRQ) Resize(maxWR int) error {
	if maxWR < len(s.q) || maxWR <= 0 {
		return fmt.Errorf("SRQ resize to %d: it holds %d WQEs", maxWR, len(s.q))
	}
	s.max = maxWR
	return nil
}

// Destroy destroys the SRQ; it fails while a QP uses it.
func (s *SRQ) Destroy() error {
	if s.users > 0 {
		return fmt.Errorf("SRQ in use by %d QPs", s.users)
	}
	s.dead, s.q = true, nil
	return nil
}

// take removes the oldest WQE, firing an armed limit the queue fell below.
func (s *SRQ) take() (rwqe, bool) {
	if len(s.q) == 0 {
		return rwqe{}, false
	}
	e := s.q[0]
	s.q = s.q[1:]
	if s.limit > 0 && len(s.q) < s.limit {
		s.limit = 0
		if s.OnLimit != nil {
			s.OnLimit()
		}
	}
	return e, true
}

// fill makes the responder's receive queue hold at least n WQEs, taking
// them from its QP's SRQ in order; it reports whether it does.
func (s *responder) fill(n int) bool {
	srq := s.qp.cfg.SRQ
	for len(s.rq) < n && srq != nil {
		e, ok := srq.take()
		if !ok {
			break
		}
		slide.Append(&s.rq, &s.rqBuf, e)
	}
	return len(s.rq) >= n
}
