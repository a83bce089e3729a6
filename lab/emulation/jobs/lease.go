package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// OwnerLease is the lease of a run's QPs (nodeapi.QPRequest.LeaseMS): a
// run renews it every quarter of it; when the run's process is gone, the
// nodes delete its QPs within about this long.
const OwnerLease = 10 * time.Second

// DefaultStall is how long a run waits, in wall-clock time, for a job that
// makes no progress at all: no message completes and not one byte arrives
// on any of its QPs. A live path moves bytes (data, acknowledgements,
// retransmission answers) many times a second at any scale; a dead node
// or a down link moves none.
const DefaultStall = 15 * time.Second

// ErrStalled is returned by a run whose job made no progress for the stall
// time: a node or link on the way is dead or down (the lab's health says
// which).
var ErrStalled = errors.New("no progress")

// lease is one run's ownership of the QPs it creates on its nodes: the
// cleanup deletes them by owner (also one whose creation was in flight
// when the run's context ended), and if this process dies (kill -9) the
// owner's lease runs out and the nodes delete the QPs themselves.
type lease struct {
	owner string
	stop  func()
}

// newLease starts renewing a fresh owner's lease on every client, every
// quarter of OwnerLease, until end (or ctx ends).
func newLease(ctx context.Context, clients ...*nodeapi.Client) *lease {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	l := &lease{owner: hex.EncodeToString(b[:])}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(OwnerLease / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, c := range clients {
					rctx, rcancel := context.WithTimeout(ctx, OwnerLease/4)
					c.RenewOwner(rctx, l.owner, OwnerLease)
					rcancel()
				}
			}
		}
	}()
	l.stop = func() { cancel(); <-done }
	return l
}

// qp is a QP request on nic owned by the lease.
func (l *lease) qp(nic string, q nodeapi.QPRequest) nodeapi.QPRequest {
	q.NIC, q.Owner, q.LeaseMS = nic, l.owner, OwnerLease.Milliseconds()
	return q
}

// end stops the renewals and deletes the owner's QPs on every client
// (within 5 s, whatever ctx says).
func (l *lease) end(ctx context.Context, clients ...*nodeapi.Client) {
	l.stop()
	cctx, cancel := afterwards(ctx)
	defer cancel()
	for _, c := range clients {
		c.DeleteQPs(cctx, nodeapi.DeleteQPsRequest{Owner: l.owner})
	}
}

// afterwards is the context of a cleanup: ctx's values, not its end, and
// at most 5 s.
func afterwards(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// stallWatch notices a progress key that stopped changing. A limit below
// zero never stalls.
type stallWatch struct {
	limit time.Duration
	key   [3]int64
	since time.Time
}

func newStallWatch(limit time.Duration) *stallWatch {
	if limit == 0 {
		limit = DefaultStall
	}
	return &stallWatch{limit: limit, since: time.Now()}
}

// stalled records key and reports whether it has not changed for the
// limit.
func (w *stallWatch) stalled(key [3]int64) bool {
	now := time.Now()
	if key != w.key {
		w.key, w.since = key, now
		return false
	}
	return w.limit > 0 && now.Sub(w.since) >= w.limit
}
