package nodeapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// health serves /health answering "starting" until ready reports true.
func health(t *testing.T, ready func() bool) *nodeapi.Client {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		st := "starting"
		if ready() {
			st = "ok"
		}
		json.NewEncoder(w).Encode(nodeapi.Health{Status: st})
	})
	return serve(t, mux)
}

func running() error { return nil }

func TestWaitHealthy(t *testing.T) {
	var polls atomic.Int32
	c := health(t, func() bool { return polls.Add(1) > 2 })
	if err := c.WaitHealthy(t.Context(), 5*time.Second, running, nil); err != nil {
		t.Fatal(err)
	}
	if n := polls.Load(); n != 3 {
		t.Errorf("%d polls, want 3", n)
	}
}

func TestWaitHealthyTimeout(t *testing.T) {
	c := health(t, func() bool { return false })
	err := c.WaitHealthy(t.Context(), 50*time.Millisecond, running, func() string { return "; the tail" })
	if err == nil || !strings.Contains(err.Error(), `no /health after 50ms (status "starting")`) || !strings.HasSuffix(err.Error(), "; the tail") {
		t.Fatalf("err = %v, want the timeout, the status and the log tail", err)
	}
}

func TestWaitHealthyExited(t *testing.T) {
	gone := errors.New("node process 42 exited")
	c := nodeapi.NewClient(filepath.Join(t.TempDir(), "none.sock"))
	defer c.Close()
	err := c.WaitHealthy(t.Context(), 5*time.Second, func() error { return gone }, func() string { return "; the tail" })
	if !errors.Is(err, gone) || !strings.HasSuffix(err.Error(), "; the tail") {
		t.Fatalf("err = %v, want %v and the log tail", err, gone)
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.log")
	if got := nodeapi.LogTail(path, 2); got != "" {
		t.Errorf("LogTail of no file = %q", got)
	}
	if err := os.WriteFile(path, []byte("a\nb\nc\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := nodeapi.LogTail(path, 2), "; log "+path+":\n  b\n  c"; got != want {
		t.Errorf("LogTail = %q, want %q", got, want)
	}
}
