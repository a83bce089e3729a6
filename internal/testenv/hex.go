package testenv

import (
	"encoding/hex"
	"testing"
)

// MustHex decodes the hex dump s of captured bytes, failing tb when it is
// not hex. It lives here rather than in wire/wiretest so that package
// wire's own tests, which wiretest imports, can use it too.
func MustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
