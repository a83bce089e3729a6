package collective

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// harness is a communicator on the ideal transport in a simulator.
type harness struct {
	eng   *sim.Engine
	ideal *Ideal
	comm  *Comm
}

// newHarness builds a harness; wrap, if not nil, wraps the ideal transport.
func newHarness(t *testing.T, cfg Config, rate clock.Rate, lat clock.Duration, wrap func(Transport) Transport) *harness {
	t.Helper()
	eng := sim.New(1)
	ideal := NewIdeal(eng, cfg.Ranks, rate, lat)
	var tr Transport = ideal
	if wrap != nil {
		tr = wrap(ideal)
	}
	comm, err := New(eng, tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{eng: eng, ideal: ideal, comm: comm}
}

// run runs one collective to completion in virtual time.
func (h *harness) run(t *testing.T, op Op, size int64, warmup, iters int) (Result, error) {
	t.Helper()
	var (
		res    Result
		err    error
		called int
	)
	h.comm.Run(op, size, warmup, iters, func(r Result, e error) { res, err = r, e; called++ })
	h.eng.Run()
	if called != 1 {
		t.Fatalf("%v size %d: done called %d times, want 1", op, size, called)
	}
	return res, err
}

// arrival is one write seen landing, for traces.
type arrival struct {
	At            clock.Time
	To, From, Off int
	N             int
	Imm           uint32
}

// tap wraps a Transport: it records arrivals, counts writes in flight per
// rank, and can flip a byte of the nth arrival carrying data, deliver the
// nth arrival twice, or fail the nth completion.
type tap struct {
	Transport
	sched       clock.Scheduler
	trace       []arrival
	flipNth     int
	dupNth      int
	failNth     int
	seen, dones int
	arrivals    int
	inflight    []int
	maxInflight []int
}

func newTap(tr Transport, sched clock.Scheduler, n int) *tap {
	return &tap{Transport: tr, sched: sched, inflight: make([]int, n), maxInflight: make([]int, n)}
}

func (p *tap) Listen(rank int, region []byte, size int, arrived ArrivalFunc) {
	p.Transport.Listen(rank, region, size, func(from, off, n int, imm uint32) {
		p.trace = append(p.trace, arrival{p.sched.Now(), rank, from, off, n, imm})
		if region != nil && n > 0 {
			p.seen++
			if p.seen == p.flipNth {
				region[off] ^= 0xff
			}
		}
		arrived(from, off, n, imm)
		if p.arrivals++; p.arrivals == p.dupNth {
			arrived(from, off, n, imm)
		}
	})
}

func (p *tap) Write(w Write, done func(error)) error {
	p.inflight[w.From]++
	p.maxInflight[w.From] = max(p.maxInflight[w.From], p.inflight[w.From])
	return p.Transport.Write(w, func(err error) {
		p.inflight[w.From]--
		p.dones++
		if p.dones == p.failNth {
			err = errInjected
		}
		done(err)
	})
}

type injectedError struct{}

func (injectedError) Error() string { return "injected completion error" }

var errInjected error = injectedError{}
