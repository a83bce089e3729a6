// Command rocelab builds RoCE AI-training fabrics on one Linux machine:
// see the README and docs/ for the tour. The CLI is thin: each command parses
// its flags and calls a package that a Go program could import as well.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C or SIGTERM cancels ctx: every command stops, rolls
	// back what it half-made and exits 130. A second one kills at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	signalled := ctx
	ctx = stopWhenOutputGone(ctx)
	root := newRootCmd(os.Stdout, os.Stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case signalled.Err() != nil:
		// Interrupted, whether the command failed or stopped cleanly (a
		// dashboard or an agent that served until Ctrl-C or SIGTERM): 130,
		// as the README's rule says.
		if err != nil {
			fmt.Fprintln(os.Stderr, "rocelab: interrupted:", err)
		}
		os.Exit(exitInterrupted)
	case ctx.Err() != nil && err != nil:
		fmt.Fprintln(os.Stderr, "rocelab: interrupted:", err)
		os.Exit(exitInterrupted)
	}
	os.Exit(exitCode(err, os.Stderr))
}

// Exit codes: 0 success; 1 a runtime failure (a node died, a deploy
// failed, a check failed); 2 bad input or usage (a file that does not
// validate, a bad flag, a lab or node that is not there, a lab to pick);
// 130 interrupted (Ctrl-C, SIGTERM). exec passes on its command's code.
const exitInterrupted = 130

// interruptExits marks a command that creates nothing (validate, graph,
// topo, wire): on Ctrl-C it exits 130 at once, wherever its computation is.
const interruptExits = "rocelab/interrupt-exits"

func exitOnInterrupt(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[interruptExits] = "yes"
	return cmd
}

// watchInterrupt exits 130 when ctx ends, for a command (or a child of
// one) marked by exitOnInterrupt.
func watchInterrupt(cmd *cobra.Command, stderr io.Writer) {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[interruptExits] == "" {
			continue
		}
		if ctx := cmd.Context(); ctx != nil && ctx.Done() != nil {
			go func() {
				<-ctx.Done()
				fmt.Fprintln(stderr, "rocelab: interrupted")
				os.Exit(exitInterrupted)
			}()
		}
		return
	}
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
