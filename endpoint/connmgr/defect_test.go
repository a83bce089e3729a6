package connmgr

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire/cm"
)

// lone is one manager whose peer is the test: every MAD it sends is kept.
type lone struct {
	e    *sim.Engine
	m    *Manager
	sent []cm.Header
	data [][]byte
	evs  []Event
}

func newLone(t *testing.T, d Defect) *lone {
	l := &lone{e: sim.New(1)}
	l.m = New(Config{Sched: l.e, Local: addrB, Timeout: 100 * clock.Microsecond, Retries: 3, FirstID: 200, Defects: d,
		Send: func(_ netip.Addr, mad []byte) {
			var h cm.Header
			data, err := cm.DecodeHeader(mad, &h)
			if err != nil {
				t.Fatal(err)
			}
			l.sent, l.data = append(l.sent, h), append(l.data, data)
		},
		Event: func(e Event) {
			l.evs = append(l.evs, e)
			if e.Kind == ConnectRequest {
				l.m.Accept(e.ID, Params{QPN: 0x22, QKey: 0x11})
			}
		}})
	return l
}

// recv hands the manager msg from addrA.
func (l *lone) recv(t *testing.T, msg cm.Message) {
	if err := l.m.Receive(addrA, cm.AppendMAD(nil, 7, msg)); err != nil {
		t.Fatal(err)
	}
}

// count is how many MADs of attr the manager sent.
func (l *lone) count(attr cm.AttrID) int {
	n := 0
	for _, h := range l.sent {
		if h.Attr == attr {
			n++
		}
	}
	return n
}

// defectCases play one exchange each; sound says what a manager without
// the defect does, so that each defect is seen to change it (with the
// tag) or not (without).
var defectCases = []struct {
	name  string
	d     Defect
	play  func(t *testing.T, l *lone)
	sound func(l *lone) bool
}{
	{"drop-unknown-req", DefectDropUnknownREQ, func(t *testing.T, l *lone) { l.recv(t, &cm.REQ{LocalCommID: 1, ServiceID: svc}) },
		func(l *lone) bool { return l.count(cm.AttrREJ) == 1 }},
	{"no-req-retry", DefectNoREQRetry, func(t *testing.T, l *lone) { l.m.Connect(addrA, Params{ServiceID: svc}); l.e.Run() },
		func(l *lone) bool { return l.count(cm.AttrREQ) == 4 }},
	{"no-rep-retry", DefectNoREPRetry, func(t *testing.T, l *lone) {
		l.m.Listen(svc)
		l.recv(t, &cm.REQ{LocalCommID: 1, ServiceID: svc})
		l.e.Run()
	}, func(l *lone) bool { return l.count(cm.AttrREP) == 4 }},
	{"dup-req-new", DefectDupREQNew, func(t *testing.T, l *lone) {
		l.m.Listen(svc)
		l.recv(t, &cm.REQ{LocalCommID: 1, ServiceID: svc})
		l.recv(t, &cm.REQ{LocalCommID: 1, ServiceID: svc})
	}, func(l *lone) bool { return len(l.evs) == 1 && l.count(cm.AttrREP) == 2 }},
	{"rep-wrong-remote-id", DefectREPWrongRemoteID, func(t *testing.T, l *lone) {
		l.m.Listen(svc)
		l.recv(t, &cm.REQ{LocalCommID: 1, ServiceID: svc})
	}, func(l *lone) bool {
		var rep cm.REP
		return l.count(cm.AttrREP) == 1 && cm.DecodeREP(l.data[0], &rep) == nil && rep.RemoteCommID == 1
	}},
	{"ignore-mra", DefectIgnoreMRA, func(t *testing.T, l *lone) {
		id := l.m.Connect(addrA, Params{ServiceID: svc})
		l.recv(t, &cm.MRA{RemoteCommID: id, ServiceTimeout: 10}) // 4.2 ms more
		l.e.RunUntil(clock.Time(clock.Millisecond))
	}, func(l *lone) bool { return l.count(cm.AttrREQ) == 1 }},
	{"no-drep", DefectNoDREP, func(t *testing.T, l *lone) { l.recv(t, &cm.DREQ{LocalCommID: 1, RemoteCommID: 9}) },
		func(l *lone) bool { return l.count(cm.AttrDREP) == 1 }},
	{"sidr-wrong-status", DefectSIDRWrongStatus, func(t *testing.T, l *lone) { l.recv(t, &cm.SIDRREQ{RequestID: 1, ServiceID: svc}) },
		func(l *lone) bool {
			var rep cm.SIDRREP
			return l.count(cm.AttrSIDRREP) == 1 && cm.DecodeSIDRREP(l.data[0], &rep) == nil && rep.Status == cm.SIDRNoService
		}},
}
