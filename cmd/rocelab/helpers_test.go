package main

import (
	"bytes"
	"context"
	"errors"
)

// runCLI runs the CLI with args in process and returns its exit code (as
// main would exit), its stdout and stderr, and the error Execute returned.
func runCLI(args ...string) (code int, stdout, stderr string, err error) {
	return runCLIContext(context.Background(), args...)
}

// runCLIContext is runCLI with the command's context: ctx's cancel is
// what main does on Ctrl-C or SIGTERM.
func runCLIContext(ctx context.Context, args ...string) (code int, stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&out, &errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
	}
	return code, out.String(), errOut.String(), err
}
