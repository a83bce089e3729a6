package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// callTimeout bounds one adapter call: a node that does not answer is
// dead, and the run says so instead of hanging.
const callTimeout = 10 * time.Second

// drainLimit bounds how long a deadline waits for the reader to catch up
// with the kernel (a reader descheduled longer is a machine in trouble).
const drainLimit = 500 * time.Millisecond

// env is one case's Env over the run's IUT.
type env struct {
	u   *IUT
	ctx context.Context
	qps []int // created by this case
	cm  bool  // the case used the CM operations
}

var (
	_ compliance.Env            = (*env)(nil)
	_ compliance.TimeoutCounter = (*env)(nil)
)

func (e *env) Send(frame []byte) error { return e.u.wire.send(frame) }

// Next returns the next frame the IUT sent that arrived by deadline,
// waiting in wall clock until deadline's instant.
func (e *env) Next(deadline clock.Time) (compliance.Frame, bool, error) {
	until := e.u.wall(deadline)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if f, ok := e.u.wire.pop(until); ok {
			return compliance.Frame{At: e.u.fabric(f.at), Data: f.data}, true, nil
		}
		if err := e.u.wire.failed(); err != nil {
			return compliance.Frame{}, false, err
		}
		left := time.Duration(until - time.Now().UnixNano())
		if left <= 0 {
			// A frame stamped before the deadline may still be on its
			// way through the reader: look once more after a moment.
			if f, ok := e.drain(until); ok {
				return f, true, nil
			}
			return compliance.Frame{}, false, nil
		}
		if timer == nil {
			timer = time.NewTimer(left)
		} else {
			timer.Reset(left)
		}
		select {
		case <-e.u.wire.signal:
		case <-timer.C:
		case <-e.ctx.Done():
			return compliance.Frame{}, false, e.ctx.Err()
		}
	}
}

// drain waits for the reader to queue every frame the kernel received by
// until (up to drainLimit), and pops one stamped by until.
func (e *env) drain(until int64) (compliance.Frame, bool) {
	e.u.wire.waitThrough(until, drainLimit)
	if f, ok := e.u.wire.pop(until); ok {
		return compliance.Frame{At: e.u.fabric(f.at), Data: f.data}, true
	}
	return compliance.Frame{}, false
}

// Timeouts is the node's retransmission timeouts so far, over its QPs
// (those destroyed included): compliance.TimeoutCounter.
func (e *env) Timeouts() (int64, error) {
	var n float64
	var match []telemetry.Label
	if e.u.nic != "" { // a lab's node: only the NIC under test
		match = append(match, telemetry.Label{Name: "node", Value: e.u.nic})
	}
	err := e.call(func(ctx context.Context) error {
		samples, err := e.u.client.Telemetry(ctx)
		n = telemetry.Sum(samples, "qp_timeouts_total", match...)
		return err
	})
	return int64(n), err
}

func (e *env) Now() clock.Time             { return e.u.fabric(time.Now().UnixNano()) }
func (e *env) Jitter() clock.Duration      { return e.u.Jitter() }
func (e *env) Peer() (netip.Addr, [6]byte) { return TesterIP, [6]byte(e.u.peerMAC) }

// Close destroys the case's QPs and lets the wire settle.
func (e *env) Close() error {
	var errs []error
	for _, id := range e.qps {
		err := e.call(func(ctx context.Context) error { return e.u.client.DeleteQP(ctx, id) })
		var ae *nodeapi.APIError
		if err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusNotFound) {
			errs = append(errs, err)
		}
	}
	e.qps = nil
	if e.cm {
		errs = append(errs, e.call(func(ctx context.Context) error { return e.u.client.CMReset(ctx, e.u.nic) }))
	}
	wait := time.Duration(e.u.wall(e.Now()+clock.Time(Settle)) - time.Now().UnixNano())
	select {
	case <-time.After(wait):
	case <-e.ctx.Done():
	}
	e.u.wire.waitThrough(time.Now().UnixNano(), drainLimit)
	e.u.wire.discard() // the frames in the kernel too: none leaks into the next case
	return errors.Join(errs...)
}

// call runs one adapter call with a timeout; a dead node is named.
func (e *env) call(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
	defer cancel()
	err := f(ctx)
	if err == nil {
		return nil
	}
	select {
	case <-e.u.exited:
		return fmt.Errorf("endpoint node (pid %d) is gone: %w%s", e.u.proc.PID, err, e.u.logTail())
	default:
	}
	var ae *nodeapi.APIError
	if errors.As(err, &ae) {
		return errors.New(ae.Message)
	}
	return err
}

func (e *env) CreateQP(s compliance.QPSpec) (compliance.QPHandle, error) {
	var q nodeapi.QPInfo
	err := e.call(func(ctx context.Context) (err error) {
		q, err = e.u.client.CreateQP(ctx, nodeapi.QPRequest{NIC: e.u.nic, Mode: s.Mode, Paths: s.Paths, Buffer: int64(s.Buffer), PSN: s.PSN, Type: s.Type, QKey: s.QKey, NoRemoteAtomic: s.NoRemoteAtomic})
		return err
	})
	if err != nil {
		return compliance.QPHandle{}, err
	}
	e.qps = append(e.qps, q.ID)
	return compliance.QPHandle{ID: q.ID, Conn: q.Conn, Buf: compliance.Buffer(q.Buffer)}, nil
}

func (e *env) Connect(id int, remote endpoint.ConnInfo) error {
	return e.call(func(ctx context.Context) error {
		_, err := e.u.client.ConnectQP(ctx, id, nodeapi.ConnectRequest{Remote: remote})
		return err
	})
}

func (e *env) PostSend(id int, wr compliance.WR) error {
	return e.call(func(ctx context.Context) error { return e.u.client.PostSend(ctx, id, wr) })
}

func (e *env) PostRecv(id int, wrid, off uint64, n uint32) error {
	return e.call(func(ctx context.Context) error {
		return e.u.client.PostRecv(ctx, id, nodeapi.RecvRequest{WRID: wrid, Offset: off, Len: n})
	})
}

func (e *env) Poll(id int) ([]compliance.Completion, error) {
	var wcs []compliance.Completion
	err := e.call(func(ctx context.Context) (err error) {
		wcs, err = e.u.client.Completions(ctx, id)
		return err
	})
	return wcs, err
}

func (e *env) Query(id int) (compliance.QPStatus, error) {
	var q nodeapi.QPInfo
	err := e.call(func(ctx context.Context) (err error) {
		q, err = e.u.client.QP(ctx, id)
		return err
	})
	return compliance.QPStatus{State: q.State, Mode: q.Mode}, err
}

func (e *env) ReadMem(id int, off uint64, n int) ([]byte, error) {
	var b []byte
	err := e.call(func(ctx context.Context) (err error) {
		b, err = e.u.client.ReadMem(ctx, id, off, n)
		return err
	})
	return b, err
}

func (e *env) WriteMem(id int, off uint64, data []byte) error {
	return e.call(func(ctx context.Context) error { return e.u.client.WriteMem(ctx, id, off, data) })
}

func (e *env) Destroy(id int) error {
	return e.call(func(ctx context.Context) error { return e.u.client.DeleteQP(ctx, id) })
}

func (e *env) CMListen(l compliance.CMListen) error {
	e.cm = true
	return e.call(func(ctx context.Context) error {
		return e.u.client.CMListen(ctx, nodeapi.CMListen{Listen: l, NIC: e.u.nic})
	})
}

func (e *env) CMConnect(c compliance.CMConnect) (compliance.CMConnected, error) {
	e.cm = true
	var out compliance.CMConnected
	err := e.call(func(ctx context.Context) (err error) {
		out, err = e.u.client.CMConnect(ctx, nodeapi.CMConnect{Connect: c, NIC: e.u.nic})
		return err
	})
	return out, err
}

func (e *env) CMEvents() ([]compliance.CMEvent, error) {
	var out []compliance.CMEvent
	err := e.call(func(ctx context.Context) (err error) {
		out, err = e.u.client.CMEvents(ctx, e.u.nic)
		return err
	})
	return out, err
}
