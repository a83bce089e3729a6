package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// readyFD is the descriptor a node process started by startNode finds its
// readiness pipe on (the first of exec.Cmd.ExtraFiles).
const readyFD = 3

// readiness is the read end of the pipe a node process writes
// node.ReadyLine to once it answers /health (node.ReadyFD). Waiting on it
// replaces polling /health: the starter learns of a node that is ready, or
// that died, the moment it happens, and spends no CPU meanwhile (at deploy
// that CPU is the starting nodes'). The members of a group share one
// process, and so one readiness.
type readiness struct {
	r    *os.File
	once sync.Once
	err  error
}

// newReadiness returns a pipe: the readiness to wait on and the write end
// for the child (the caller closes it once the child has started).
func newReadiness() (*readiness, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("readiness pipe: %w", err)
	}
	return &readiness{r: r}, w, nil
}

// wait returns once process pr said it is ready, or failed: it exited
// first (its log's tail says why), ctx ended or timeout (default
// nodeapi.DefaultHealthTimeout) passed. Every call returns the first
// call's answer; the pipe is closed after it.
func (rd *readiness) wait(ctx context.Context, pr proc.Process, timeout time.Duration, logTail func() string) error {
	rd.once.Do(func() {
		defer rd.r.Close()
		rd.err = awaitReadyLine(ctx, rd.r, pr, timeout, logTail)
	})
	return rd.err
}

// close releases the pipe of a readiness never waited on (a deploy that
// failed before its healthy step).
func (rd *readiness) close() {
	rd.once.Do(func() {
		rd.r.Close()
		rd.err = errors.New("readiness: not waited on")
	})
}

func awaitReadyLine(ctx context.Context, r *os.File, pr proc.Process, timeout time.Duration, logTail func() string) error {
	if timeout <= 0 {
		timeout = nodeapi.DefaultHealthTimeout
	}
	if err := r.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("readiness pipe: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { r.SetReadDeadline(time.Now()) })
	defer stop()
	var got strings.Builder
	buf := make([]byte, len(node.ReadyLine))
	for got.Len() < len(node.ReadyLine) {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if got.String() == node.ReadyLine {
				return nil
			}
			// The write end closed unsaid: the process is gone, or going.
			return fmt.Errorf("node process %v exited before it was ready%s", pr, logTail())
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !pr.Alive() {
				return fmt.Errorf("node process %v exited%s", pr, logTail())
			}
			return fmt.Errorf("node process %v not ready after %v%s", pr, timeout, logTail())
		default:
			return fmt.Errorf("readiness pipe: %w", err)
		}
	}
	if got.String() != node.ReadyLine {
		return fmt.Errorf("node process %v wrote %q on its readiness pipe, want %q", pr, got.String(), node.ReadyLine)
	}
	return nil
}
