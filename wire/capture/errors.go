package capture

import (
	"fmt"

	"github.com/rocelab/rocelab/wire"
)

// The layers' errors are wire's: a *wire.DecodeError wrapping
// wire.ErrTruncated or wire.ErrMalformed on decode, wire.ErrInvalidSpec on
// serialise.

func truncated(layer string, off, need, have int) error {
	return &wire.DecodeError{Layer: layer, Offset: off, Err: wire.ErrTruncated,
		Detail: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

func malformed(layer string, off int, detail string) error {
	return &wire.DecodeError{Layer: layer, Offset: off, Err: wire.ErrMalformed, Detail: detail}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("wire: build: %w: %s", wire.ErrInvalidSpec, fmt.Sprintf(format, args...))
}
