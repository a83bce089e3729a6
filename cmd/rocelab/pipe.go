package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// errOutputGone is why a command stops when whoever read its output has
// gone (`rocelab run FILE | head -3`).
var errOutputGone = errors.New("standard output or error closed by its reader")

// stopWhenOutputGone returns ctx cancelled once standard output or error
// is a pipe whose reader has closed it. Left to Go's default, the first
// write there would kill the process at once — a `rocelab run` in the
// middle of its lab, which then stayed deployed. Asked for instead, a
// SIGPIPE only fails the write; the command is stopped as by Ctrl-C: it
// rolls back what it made and exits 130. A SIGPIPE from any other
// descriptor (a node's API socket that closed) leaves the command to see
// the write's error, as before.
func stopWhenOutputGone(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGPIPE)
	go func() {
		for range sig {
			if outputGone() {
				cancel(errOutputGone)
			}
		}
	}()
	return ctx
}

// outputGone reports whether standard output or error is a pipe with no
// reader left (poll says POLLERR on its write end).
func outputGone() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
