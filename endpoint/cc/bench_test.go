package cc_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/endpoint/cc/credit"
	"github.com/rocelab/rocelab/endpoint/cc/dcqcn"
)

// nopTimer and fakeSched let BenchmarkDCQCN/OnSend measure the controller
// alone (OnSend schedules nothing).
type nopTimer struct{}

func (nopTimer) Stop() bool { return true }

type fakeSched struct{ now clock.Time }

func (f *fakeSched) Now() clock.Time                              { return f.now }
func (f *fakeSched) AfterFunc(clock.Duration, func()) clock.Timer { return nopTimer{} }

func benchEnv(s clock.Scheduler) cc.Env {
	return cc.Env{Sched: s, LineRate: 100 * clock.Gbps, MTU: 4096, SendGrant: func(cc.Grant) {}}
}

func BenchmarkDCQCN(b *testing.B) {
	b.Run("OnSend", func(b *testing.B) {
		s, _ := dcqcn.Algorithm().NewSender(benchEnv(&fakeSched{}))
		s.OnFeedback(cc.Feedback{Kind: cc.CNP}) // recovering: the byte counter runs
		b.ReportAllocs()
		for range b.N {
			s.OnSend(4096)
		}
	})
	// A CNP every 10 µs: a cut every 5th, a deferred cut otherwise, timers
	// running on the simulator (its cost is included).
	b.Run("OnFeedbackCNP", func(b *testing.B) {
		e := sim.New(1)
		s, _ := dcqcn.Algorithm().NewSender(benchEnv(e))
		b.ReportAllocs()
		for range b.N {
			e.RunFor(10 * clock.Microsecond)
			s.OnFeedback(cc.Feedback{Kind: cc.CNP})
		}
	})
}

func BenchmarkCredit(b *testing.B) {
	b.Run("Sender", func(b *testing.B) {
		s, _ := credit.Algorithm().NewSender(benchEnv(nil))
		b.ReportAllocs()
		for range b.N {
			s.OnFeedback(cc.Feedback{Kind: cc.Credit, Bytes: 4096})
			s.OnSend(4096)
		}
	})
	// Each OnData frees room for one grant, sent at once (the pacer's gap
	// has passed); simulator cost included.
	b.Run("ReceiverOnDataGrant", func(b *testing.B) {
		e := sim.New(1)
		r, _ := credit.Algorithm().NewReceiver(benchEnv(e))
		for id := range uint32(8) {
			r.OnRequest(id, 1<<62)
		}
		b.ReportAllocs()
		for i := range b.N {
			e.RunFor(400 * clock.Nanosecond)
			r.OnData(uint32(i%8), 4096, false)
		}
		if g := r.(*credit.Receiver).Stats().Grants; g < uint64(b.N) {
			b.Fatalf("%d grants for %d arrivals", g, b.N)
		}
	})
}
