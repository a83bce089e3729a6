// Package web is rocelab's live web view: a self-contained page (embedded
// with go:embed, no CDN) that draws the lab's topology and colours it as
// the fabric runs — links by utilisation, switch ports by queue depth, PFC
// pauses per link direction — with per-QP and per-collective rate charts,
// the active faults and a timeline; and the replay of a scenario report
// with a time slider (and its chakra jobs' per-rank timelines, the
// replay's time marked on them). The page gets one event stream (Server-Sent Events)
// of Frames, at 4 per second by default.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/topologies/graph"
)

//go:embed static
var static embed.FS

// Feed produces the frames the page shows. Next blocks until the next
// frame is due (or ctx ends) and returns it.
type Feed interface {
	Next(ctx context.Context) (Frame, error)
}

// Options configure a Server.
type Options struct {
	// Title is shown in the page header (the lab or report name).
	Title string
	// Layout is the topology drawing.
	Layout graph.Layout
	// NewFeed makes each event stream's feed; a feed that is an io.Closer
	// is closed when its stream ends (see Share).
	NewFeed func() Feed
	// Replay, when set, says the feed is a recording of Length fabric
	// seconds and the page shows a time slider (see ReplayFeed).
	Replay *ReplayInfo
	// Chakra are the timelines of a replayed report's chakra jobs, which
	// the page draws as a Gantt chart with the replay's time on it.
	Chakra []report.Timeline
	// Metrics, if set, is served at /metrics.
	Metrics http.Handler
	Log     *slog.Logger
}

// ReplayInfo describes a recording for the page's slider.
type ReplayInfo struct {
	Frames int     `json:"frames"`
	Length float64 `json:"length_s"`
	// Speed is the default replay speed, fabric seconds per wall second;
	// an event stream takes ?speed= to play at another.
	Speed float64 `json:"speed"`
}

// Server serves the page, its assets, the topology and the event stream.
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, mux: http.NewServeMux()}
	sub, _ := fs.Sub(static, "static")
	s.mux.Handle("GET /", http.FileServerFS(sub))
	s.mux.HandleFunc("GET /api/view", s.view)
	s.mux.HandleFunc("GET /api/events", s.events)
	if opts.Metrics != nil {
		s.mux.Handle("GET /metrics", opts.Metrics)
	}
	return s
}

// ServeHTTP serves the routes; it never changes the lab (read-only).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

type viewInfo struct {
	Title  string            `json:"title"`
	Layout graph.Layout      `json:"layout"`
	Replay *ReplayInfo       `json:"replay,omitempty"`
	Chakra []report.Timeline `json:"chakra,omitempty"`
}

func (s *Server) view(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(viewInfo{Title: s.opts.Title, Layout: s.opts.Layout, Replay: s.opts.Replay, Chakra: s.opts.Chakra})
}

// events streams frames as Server-Sent Events until the client goes away.
// A replay stream takes ?from=SECONDS to start at that fabric time and
// ?speed=S to play S fabric seconds per wall second.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	feed := s.opts.NewFeed()
	if c, ok := feed.(io.Closer); ok {
		defer c.Close()
	}
	if rf, ok := feed.(*replayFeed); ok {
		var from float64
		fmt.Sscanf(r.URL.Query().Get("from"), "%g", &from)
		rf.seekTo(from)
		var speed float64
		fmt.Sscanf(r.URL.Query().Get("speed"), "%g", &speed)
		rf.setSpeed(speed)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	ctx := r.Context()
	for {
		f, err := feed.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			fmt.Fprintf(w, "event: problem\ndata: %q\n\n", err.Error())
			fl.Flush()
			if err == errEnd {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		b, _ := json.Marshal(f)
		fmt.Fprintf(w, "event: frame\ndata: %s\n\n", b)
		fl.Flush()
	}
}
