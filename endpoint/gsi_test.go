package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/endpoint/connmgr"
	"github.com/rocelab/rocelab/wire/cm"
)

// TestCMOverFabric: two NICs behind a switch make a connection through
// their QP1s' Communication Managers — REQ, REP, RTU as UD datagrams
// across the switch model — then tear it down; a REQ to a NIC that
// listens on nothing is rejected with reason 8. It holds with and without
// frame bytes (CM MADs always carry theirs).
func TestCMOverFabric(t *testing.T) {
	for _, raw := range []bool{false, true} {
		s := newStar(t, starOpts{n: 3, raw: raw})
		var events []string
		log := func(side string) func(connmgr.Event) {
			return func(e connmgr.Event) { events = append(events, side+" "+e.Kind.String()) }
		}
		svc := cm.ServiceID(cm.PortSpaceTCP, 18515)
		var a, b *connmgr.Manager
		a = s.nics[0].StartCM(connmgr.Config{Event: func(e connmgr.Event) {
			log("A")(e)
			if e.Kind == connmgr.Replied {
				a.Confirm(e.ID)
			}
		}})
		b = s.nics[1].StartCM(connmgr.Config{Event: func(e connmgr.Event) {
			log("B")(e)
			if e.Kind == connmgr.ConnectRequest {
				if e.Remote.QPN != 0x123 || string(e.Remote.Private[:4]) != "ping" {
					t.Errorf("raw %v: request carried QPN %#x, private %q", raw, e.Remote.QPN, e.Remote.Private[:4])
				}
				b.Accept(e.ID, connmgr.Params{QPN: 0x456})
			}
		}})
		s.nics[2].StartCM(connmgr.Config{Event: log("C")})
		if err := b.Listen(svc); err != nil {
			t.Fatal(err)
		}
		id := a.Connect(s.nics[1].IP(), connmgr.Params{ServiceID: svc, QPN: 0x123, Private: []byte("ping")})
		a.Connect(s.nics[2].IP(), connmgr.Params{ServiceID: svc})
		s.e.Run()
		if err := a.Disconnect(id); err != nil {
			t.Fatalf("raw %v: %v (events %v)", raw, err, events)
		}
		s.e.Run()
		want := map[string]int{"B connect-request": 1, "A replied": 1, "B established": 1, "A rejected": 1,
			"A disconnected": 1, "B disconnected": 1}
		got := map[string]int{}
		for _, e := range events {
			got[e]++
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("raw %v: %d %q events, want %d (all: %v)", raw, got[k], k, v, events)
			}
		}
		if len(events) != 6 {
			t.Errorf("raw %v: events %v", raw, events)
		}
	}
}
