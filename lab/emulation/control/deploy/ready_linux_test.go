package deploy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/node"
)

// TestReadinessWait: what a starter makes of its node's readiness pipe —
// the ready line (whole or in pieces), an end of file before it (the
// process died), silence past the timeout, a cancelled context, and
// something else written. A second wait gives the first answer.
func TestReadinessWait(t *testing.T) {
	self, err := proc.Lookup(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tail := func() string { return "; log: boom" }
	for _, tc := range []struct {
		name   string
		child  func(w *os.File) // what the node does with its end
		cancel bool
		want   string // "" for ready
	}{
		{"ready", func(w *os.File) { w.WriteString(node.ReadyLine); w.Close() }, false, ""},
		{"ready in pieces", func(w *os.File) {
			w.WriteString(node.ReadyLine[:2])
			time.Sleep(5 * time.Millisecond)
			w.WriteString(node.ReadyLine[2:])
		}, false, ""},
		{"died first", func(w *os.File) { w.Close() }, false, "exited before it was ready; log: boom"},
		{"died mid-line", func(w *os.File) { w.WriteString("rea"); w.Close() }, false, "exited before it was ready"},
		{"silent", func(*os.File) {}, false, "not ready after 50ms; log: boom"},
		{"cancelled", func(*os.File) {}, true, context.Canceled.Error()},
		{"garbage", func(w *os.File) { w.WriteString("hello!"); w.Close() }, false, `wrote "hello!"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, w, err := newReadiness()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go tc.child(w)
			if tc.cancel {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			timeout := 50 * time.Millisecond
			if tc.cancel {
				timeout = 10 * time.Second
			}
			start := time.Now()
			err = rd.wait(ctx, self, timeout, tail)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("wait: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("wait: %v, want an error with %q", err, tc.want)
			}
			if tc.cancel && time.Since(start) > 5*time.Second {
				t.Errorf("a cancelled wait took %v", time.Since(start))
			}
			if again := rd.wait(ctx, self, timeout, tail); again != err {
				t.Errorf("second wait %v, first %v", again, err)
			}
			rd.close() // after a wait: nothing to do, no panic
		})
	}
}
