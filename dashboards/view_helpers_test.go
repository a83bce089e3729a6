package dashboards

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/graph"
)

// serveView serves h on a loopback port until the test ends and returns
// its URL.
func serveView(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// busyFeed plays made-up frames over a layout, one per 50 ms: every link
// carrying traffic, every switch port with a queue, a PFC pause held on
// every fifth link and one moving from link to link every 200 ms (so that
// the timeline fills) — everything the view draws, at once.
type busyFeed struct {
	layout graph.Layout
	k      int
}

func (f *busyFeed) Next(ctx context.Context) (web.Frame, error) {
	if f.k > 0 {
		select {
		case <-ctx.Done():
			return web.Frame{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	fr := web.Frame{Wall: time.Now(), FabricTime: float64(f.k) * 10e-6, Queues: map[string]int{}, Nodes: map[string]string{}}
	for i, l := range f.layout.Links {
		fr.Links = append(fr.Links, web.LinkState{A: l.A, APort: l.APort, B: l.B, BPort: l.BPort,
			UtilAB: float64((i+f.k)%10) / 10, UtilBA: 0.3,
			PFCAB: i == (f.k/4)%len(f.layout.Links), PFCBA: i%5 == 0})
	}
	for node, ports := range f.layout.Ports {
		fr.Nodes[node] = "up"
		for i, p := range ports {
			fr.Queues[node+":"+p] = 1024 * (16 + 8*i)
		}
	}
	f.k++
	return fr, nil
}

// laptopView is the live view of the laptop lab's topology, drawn as
// `rocelab dashboard` draws it, fed by a busyFeed.
func laptopView(t *testing.T) http.Handler {
	t.Helper()
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	layout := graph.NewLayout(topo, graph.Options{Full: true})
	return web.New(web.Options{Title: "laptop (made-up traffic)", Layout: layout,
		NewFeed: func() web.Feed { return &busyFeed{layout: layout} }})
}

// crampedView is a view whose layout hides a straight link: a host box
// touching its switch's box from below, and a second switch overlapping
// the first.
func crampedView(t *testing.T) http.Handler {
	t.Helper()
	box := func(id string, kind topologies.Kind, x, y float64) graph.Box {
		return graph.Box{ID: id, Label: id, Kind: kind, Nodes: []string{id}, X: x, Y: y, W: 96, H: 40}
	}
	layout := graph.Layout{Width: 400, Height: 300,
		Boxes: []graph.Box{box("sw", topologies.KindSwitch, 200, 100), box("h", topologies.KindHost, 200, 140),
			box("sw2", topologies.KindSwitch, 260, 110)},
		Links: []graph.Link{{A: "h", APort: "gpu0", B: "sw", BPort: "p1", ABox: "h", BBox: "sw"},
			{A: "sw", APort: "p2", B: "sw2", BPort: "p1", ABox: "sw", BBox: "sw2"}},
		Ports: map[string][]string{"h": {"gpu0"}, "sw": {"p1", "p2"}, "sw2": {"p1"}}}
	return web.New(web.Options{Title: "cramped", Layout: layout,
		NewFeed: func() web.Feed { return &busyFeed{layout: layout} }})
}
