package connmgr

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire/cm"
)

var (
	addrA = netip.MustParseAddr("10.1.1.1")
	addrB = netip.MustParseAddr("10.1.4.1")
	svc   = cm.ServiceID(cm.PortSpaceTCP, 7174)
)

const hop = 10 * clock.Microsecond

// pair is two ports' managers joined by a link of one hop's delay that
// drop may thin; log is every event and every message on the wire.
type pair struct {
	e    *sim.Engine
	a, b *Manager
	drop func(from netip.Addr, attr cm.AttrID, n int) bool // n: the how-many-th message of attr from from
	sent map[string]int
	log  []string
	// onEvent, if set, is the consumer: it may Accept, Reject, Disconnect.
	onEvent func(p *pair, side string, e Event)
}

func newPair(t *testing.T) *pair {
	p := &pair{e: sim.New(1), sent: map[string]int{}}
	mk := func(side string, local netip.Addr, peer func() *Manager, first uint32) *Manager {
		return New(Config{Sched: p.e, Local: local, GUID: uint64(first), Timeout: 100 * clock.Microsecond, Retries: 3, FirstID: first,
			Send: func(to netip.Addr, mad []byte) {
				var h cm.Header
				if _, err := cm.DecodeHeader(mad, &h); err != nil {
					t.Fatal(err)
				}
				key := side + " " + h.Attr.String()
				p.sent[key]++
				if p.drop != nil && p.drop(local, h.Attr, p.sent[key]) {
					p.log = append(p.log, fmt.Sprintf("%v %s (lost)", p.e.Now(), key))
					return
				}
				p.log = append(p.log, fmt.Sprintf("%v %s", p.e.Now(), key))
				dst := peer()
				p.e.AfterFunc(hop, func() {
					if err := dst.Receive(local, mad); err != nil {
						t.Error(err)
					}
				})
			},
			Event: func(e Event) {
				p.log = append(p.log, fmt.Sprintf("%v %s %s %d", p.e.Now(), side, e.Kind, e.Reason))
				if p.onEvent != nil {
					p.onEvent(p, side, e)
				}
			}})
	}
	p.a = mk("A", addrA, func() *Manager { return p.b }, 100)
	p.b = mk("B", addrB, func() *Manager { return p.a }, 200)
	return p
}

// accept is a consumer that accepts every request, with B's QP.
func accept(p *pair, side string, e Event) {
	if side == "B" && e.Kind == ConnectRequest {
		p.b.Accept(e.ID, Params{QPN: 0x22, PSN: 0x200})
	}
}

func TestConnectionLife(t *testing.T) {
	for _, tc := range []struct {
		name    string
		listen  bool
		drop    func(from netip.Addr, attr cm.AttrID, n int) bool
		onEvent func(p *pair, side string, e Event)
		// disconnect at 1 ms from A.
		disconnect bool
		want       []string
		left       int // connections the two managers hold at the end
	}{
		{name: "established", listen: true, onEvent: accept, want: []string{
			"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A RTU", "20us A established 0",
			"30us B established 0"}, left: 2},
		{name: "no listener: REJ invalid service ID within one round trip", want: []string{
			"0s A REQ", "10us B REJ", "20us A rejected 8"}},
		{name: "consumer rejects", listen: true, onEvent: func(p *pair, side string, e Event) {
			if side == "B" && e.Kind == ConnectRequest {
				p.b.Reject(e.ID, []byte("busy"))
			}
		}, want: []string{"0s A REQ", "10us B connect-request 0", "10us B REJ", "20us A rejected 28"}},
		{name: "first REQ lost: sent again after the timeout", listen: true, onEvent: accept,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return attr == cm.AttrREQ && n == 1 },
			want: []string{"0s A REQ (lost)", "100us A REQ", "110us B connect-request 0", "110us B REP", "120us A RTU",
				"120us A established 0", "130us B established 0"}, left: 2},
		{name: "RTU lost: B sends its REP again, A its RTU", listen: true, onEvent: accept,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return attr == cm.AttrRTU && n == 1 },
			want: []string{"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A RTU (lost)", "20us A established 0",
				"110us B REP", "120us A RTU", "130us B established 0"}, left: 2},
		{name: "peer dead: unreachable after the retries", listen: true, onEvent: accept,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return from == addrA },
			want: []string{"0s A REQ (lost)", "100us A REQ (lost)", "200us A REQ (lost)", "300us A REQ (lost)",
				"400us A unreachable 0"}},
		{name: "disconnect", listen: true, onEvent: accept, disconnect: true, want: []string{
			"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A RTU", "20us A established 0",
			"30us B established 0", "1ms A DREQ", "1.01ms B DREP", "1.01ms B disconnected 0", "1.02ms A disconnected 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t)
			p.drop, p.onEvent = tc.drop, tc.onEvent
			if tc.listen {
				if err := p.b.Listen(svc); err != nil {
					t.Fatal(err)
				}
			}
			id := p.a.Connect(addrB, Params{ServiceID: svc, QPN: 0x11, PSN: 0x100, Private: []byte("hi")})
			if tc.disconnect {
				p.e.AfterFunc(clock.Millisecond, func() {
					if err := p.a.Disconnect(id); err != nil {
						t.Error(err)
					}
				})
			}
			p.e.RunUntil(clock.Time(10 * clock.Millisecond))
			if diff := cmp.Diff(tc.want, p.log); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := len(p.a.conns) + len(p.b.conns); n != tc.left {
				t.Errorf("%d connections left, want %d", n, tc.left)
			}
		})
	}
}

// TestConnectRequestCarries: the passive side hears the active side's QP,
// PSN and private data; the active side hears the passive side's.
func TestConnectRequestCarries(t *testing.T) {
	p := newPair(t)
	var got []Event
	p.onEvent = func(p *pair, side string, e Event) {
		got = append(got, e)
		accept(p, side, e)
	}
	p.b.Listen(svc)
	p.a.Connect(addrB, Params{ServiceID: svc, QPN: 0x11, PSN: 0x100, Private: []byte("hi")})
	p.e.Run()
	if len(got) != 3 || got[0].Remote.QPN != 0x11 || got[0].Remote.PSN != 0x100 || string(got[0].Remote.Private[:2]) != "hi" ||
		got[0].Remote.ServiceID != svc || got[1].Remote.QPN != 0x22 || got[1].Remote.PSN != 0x200 {
		t.Errorf("events %+v", got)
	}
	if err := p.b.Accept(got[0].ID, Params{}); err == nil {
		t.Error("a second Accept of one request was taken")
	}
}
