package nodeapi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"
)

// DefaultHealthTimeout is WaitHealthy's timeout when it is given none.
const DefaultHealthTimeout = 30 * time.Second

// WaitHealthy polls /health until it answers "ok", ctx ends, exited
// reports that the node's process is gone (exited returns why: nil while
// it runs) or timeout (0: DefaultHealthTimeout) passes. The errors of an
// exit and of the timeout end with logTail() (nil: nothing), the tail of
// the node's output.
func (c *Client) WaitHealthy(ctx context.Context, timeout time.Duration, exited func() error, logTail func() string) error {
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	if logTail == nil {
		logTail = func() string { return "" }
	}
	deadline := time.Now().Add(timeout)
	// A node answers within about 10 ms of its start: poll every
	// millisecond for the first 100 ms (a 5 ms first step doubling to
	// 100 ms used to add up to half a node's start time to every
	// deploy), then back off to 50 ms.
	for polls, sleep := 0, time.Millisecond; ; polls++ {
		if polls >= 100 {
			sleep = min(sleep*3/2, 50*time.Millisecond)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		h, err := c.Health(cctx)
		cancel()
		if err == nil && h.Status == "ok" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("status %q", h.Status)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if gone := exited(); gone != nil {
			return fmt.Errorf("%w%s", gone, logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no /health after %v (%v)%s", timeout, err, logTail())
		}
		time.Sleep(sleep)
	}
}

// LogTail returns the last n lines of the node log at path, formatted for
// the end of an error ("; log PATH:" and the lines, indented), or "" when
// the log is missing or empty.
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	b = bytes.TrimSpace(b)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "; log " + path + ":\n  " + string(bytes.Join(lines, []byte("\n  ")))
}
