package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by the decoders wrap one of these (test
// with errors.Is) inside a *DecodeError that says where parsing stopped.
var (
	// ErrTruncated: the frame ends before a header or a length field says it should.
	ErrTruncated = errors.New("truncated")
	// ErrMalformed: a field holds a value the format does not allow.
	ErrMalformed = errors.New("malformed")
	// ErrBadICRC: the ICRC carried by a RoCEv2 packet is not the one computed over it.
	ErrBadICRC = errors.New("ICRC mismatch")
	// ErrNotRoCE: the frame is not a RoCEv2 packet (for ICRC functions).
	ErrNotRoCE = errors.New("not a RoCEv2 packet")
	// ErrInvalidSpec: a builder was asked for a frame its fields cannot describe.
	ErrInvalidSpec = errors.New("invalid frame spec")
)

// DecodeError reports where decoding a frame failed.
type DecodeError struct {
	Layer  string // "Ethernet", "IPv4", "UDP", "BTH", …
	Offset int    // byte offset of that header in the frame
	Detail string // what was wrong, for humans
	Err    error  // one of the sentinel errors
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("wire: decode %s at offset %d: %v: %s", e.Layer, e.Offset, e.Err, e.Detail)
}

// Unwrap returns the sentinel error.
func (e *DecodeError) Unwrap() error { return e.Err }

func truncated(layer string, off, need, have int) error {
	return &DecodeError{Layer: layer, Offset: off, Err: ErrTruncated,
		Detail: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

func malformed(layer string, off int, detail string) error {
	return &DecodeError{Layer: layer, Offset: off, Err: ErrMalformed, Detail: detail}
}
