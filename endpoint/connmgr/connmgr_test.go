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

// accept is a consumer that accepts every request, with B's QP, and
// confirms every reply.
func accept(p *pair, side string, e Event) {
	switch {
	case side == "B" && e.Kind == ConnectRequest:
		p.b.Accept(e.ID, Params{QPN: 0x22, PSN: 0x200})
	case side == "A" && e.Kind == Replied:
		p.a.Confirm(e.ID)
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
			"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A replied 0", "20us A RTU",
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
			want: []string{"0s A REQ (lost)", "100us A REQ", "110us B connect-request 0", "110us B REP", "120us A replied 0",
				"120us A RTU", "130us B established 0"}, left: 2},
		{name: "RTU lost: B sends its REP again, A its RTU", listen: true, onEvent: accept,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return attr == cm.AttrRTU && n == 1 },
			want: []string{"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A replied 0", "20us A RTU (lost)",
				"110us B REP", "120us A RTU", "130us B established 0"}, left: 2},
		{name: "peer dead: unreachable after the retries", listen: true, onEvent: accept,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return from == addrA },
			want: []string{"0s A REQ (lost)", "100us A REQ (lost)", "200us A REQ (lost)", "300us A REQ (lost)",
				"400us A unreachable 0"}},
		{name: "disconnect", listen: true, onEvent: accept, disconnect: true, want: []string{
			"0s A REQ", "10us B connect-request 0", "10us B REP", "20us A replied 0", "20us A RTU",
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
	if len(got) != 3 || got[1].Kind != Replied || got[0].Remote.QPN != 0x11 || got[0].Remote.PSN != 0x100 || string(got[0].Remote.Private[:2]) != "hi" ||
		got[0].Remote.ServiceID != svc || got[1].Remote.QPN != 0x22 || got[1].Remote.PSN != 0x200 {
		t.Errorf("events %+v", got)
	}
	if err := p.b.Accept(got[0].ID, Params{}); err == nil {
		t.Error("a second Accept of one request was taken")
	}
}

// TestSIDR: a UD service request is answered with the service's QP and
// Q_Key, refused when nobody listens or the consumer says no, and a
// request sent again is answered as the first was, without a second
// ConnectRequest.
func TestSIDR(t *testing.T) {
	usvc := cm.ServiceID(cm.PortSpaceUDP, 7174)
	for _, tc := range []struct {
		name    string
		listen  bool
		reject  bool
		drop    func(from netip.Addr, attr cm.AttrID, n int) bool
		want    []string
		wantQPN uint32
	}{
		{name: "answered", listen: true, wantQPN: 0x33, want: []string{"0s A SIDR_REQ", "10us B connect-request 0",
			"10us B SIDR_REP", "20us A established 0"}},
		{name: "nobody listens", want: []string{"0s A SIDR_REQ", "10us B SIDR_REP", "20us A rejected 1"}},
		{name: "consumer refuses", listen: true, reject: true, want: []string{"0s A SIDR_REQ", "10us B connect-request 0",
			"10us B SIDR_REP", "20us A rejected 2"}},
		{name: "answer lost: the request sent again gets it again", listen: true, wantQPN: 0x33,
			drop: func(from netip.Addr, attr cm.AttrID, n int) bool { return attr == cm.AttrSIDRREP && n == 1 },
			want: []string{"0s A SIDR_REQ", "10us B connect-request 0", "10us B SIDR_REP (lost)", "100us A SIDR_REQ",
				"110us B SIDR_REP", "120us A established 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t)
			p.drop = tc.drop
			var got Event
			p.onEvent = func(p *pair, side string, e Event) {
				if !e.UD {
					t.Errorf("%s %v: not marked UD", side, e.Kind)
				}
				switch {
				case side == "B" && e.Kind == ConnectRequest && tc.reject:
					p.b.Reject(e.ID, nil)
				case side == "B" && e.Kind == ConnectRequest:
					p.b.Accept(e.ID, Params{QPN: 0x33, QKey: 0x01234567})
				case side == "A":
					got = e
				}
			}
			if tc.listen {
				p.b.Listen(usvc)
			}
			p.a.Resolve(addrB, Params{ServiceID: usvc})
			p.e.RunUntil(clock.Time(10 * clock.Millisecond))
			if diff := cmp.Diff(tc.want, p.log); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Remote.QPN != tc.wantQPN || tc.wantQPN != 0 && got.Remote.QKey != 0x01234567 {
				t.Errorf("active side heard %+v", got.Remote)
			}
			if n := len(p.a.conns) + len(p.b.conns); n != 0 {
				t.Errorf("%d conversations left, want 0", n)
			}
		})
	}
}

// TestDelayAndClose: an MRA makes the active side wait the service
// timeout it asks before it sends its REQ again; a consumer that closes an
// established connection disconnects it without hearing of it.
func TestDelayAndClose(t *testing.T) {
	p := newPair(t)
	p.b.Listen(svc)
	var req uint32
	p.onEvent = func(p *pair, side string, e Event) {
		switch {
		case side == "B" && e.Kind == ConnectRequest:
			req = e.ID
			p.b.Delay(e.ID, 8) // 4.096 µs × 2^8 ≈ 1.05 ms more
			p.e.AfterFunc(900*clock.Microsecond, func() { p.b.Accept(req, Params{QPN: 0x22}) })
		case side == "A" && e.Kind == Replied:
			p.a.Confirm(e.ID)
			p.e.AfterFunc(clock.Millisecond, func() { p.a.Close(e.ID) })
		}
	}
	p.a.Connect(addrB, Params{ServiceID: svc})
	p.e.RunUntil(clock.Time(10 * clock.Millisecond))
	want := []string{"0s A REQ", "10us B connect-request 0", "10us B MRA", "910us B REP", "920us A replied 0", "920us A RTU",
		"930us B established 0", "1.92ms A DREQ", "1.93ms B DREP", "1.93ms B disconnected 0"}
	if diff := cmp.Diff(want, p.log); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
