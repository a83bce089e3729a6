// Command rocelab builds RoCE AI-training fabrics on one Linux machine:
// see the README and docs/ for the tour. The CLI is thin: each command parses
// its flags and calls a package that a Go program could import as well.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(os.Stdout, os.Stderr)
	err := root.ExecuteContext(ctx)
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries the process exit code of a failure: 2 for bad input
// (a topology or scenario file that does not validate, a bad flag), 1 for
// everything else.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as the user's input being wrong: exit code 2.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: 2, err: err}
}

// exitCode prints err (if any) and returns the exit code for it.
func exitCode(err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "rocelab:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isUsageError(err) {
		return 2
	}
	return 1
}
