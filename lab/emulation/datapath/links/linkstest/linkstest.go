//go:build linux

// Package linkstest makes the veth pairs of tests: created at once,
// deleted when the test ends.
package linkstest

import (
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
)

// Veth creates v for tb and deletes it (by its A end) when tb ends.
func Veth(tb testing.TB, v links.Veth) {
	tb.Helper()
	if err := links.Create(v); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := links.Delete(v.A.NetNS, v.A.Name); err != nil {
			tb.Error(err)
		}
	})
}

// Pair joins namespaces a and b with a veth of unique names (offloads
// off, no IPv6) and returns the two interface names.
func Pair(tb testing.TB, a, b string, mtu int) (string, string) {
	tb.Helper()
	id := netnstest.Unique("")
	ea, eb := "rlta"+id, "rltb"+id
	Veth(tb, links.Veth{
		A:   links.End{NetNS: a, Name: ea, NoIPv6: true},
		B:   links.End{NetNS: b, Name: eb, NoIPv6: true},
		MTU: mtu,
	})
	return ea, eb
}
