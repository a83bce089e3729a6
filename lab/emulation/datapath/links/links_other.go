//go:build !linux

package links

import (
	"errors"
	"time"
)

var errUnsupported = errors.New("links: only implemented on Linux")

// Offloads are the ethtool feature names Create turns off.
var Offloads []string

// Create makes the veth pair v.
func Create(v Veth) error { return errUnsupported }

// Delete removes the interface name from namespace ns.
func Delete(ns, name string) error { return errUnsupported }

// Features returns the active state of every feature of an interface.
func Features(ns, ifname string) (map[string]bool, error) { return nil, errUnsupported }

// SetFeatures turns features on or off.
func SetFeatures(ns, ifname string, want map[string]bool) error { return errUnsupported }

// DisableOffloads turns off every feature in Offloads.
func DisableOffloads(ns, ifname string) error { return errUnsupported }

// Tagged is an interface found with an alias.
type Tagged struct {
	NetNS, Name, Alias string
}

// ListTagged returns the interfaces of namespace ns whose alias satisfies match.
func ListTagged(ns string, match func(alias string) bool) ([]Tagged, error) {
	return nil, errUnsupported
}

// DisableIPv6 turns IPv6 off on an interface.
func DisableIPv6(ns, ifname string) error { return errUnsupported }

// Maker creates many veth pairs.
type Maker struct {
	OwnNamespaces bool
	TunnelWait    time.Duration
	Waited        func(what string, d time.Duration)
}

// Create makes the veth pair v.
func (m *Maker) Create(v Veth) error { return errUnsupported }

// WaitUp waits until every pair made is up.
func (m *Maker) WaitUp(timeout time.Duration) error { return errUnsupported }

// Close releases the Maker.
func (m *Maker) Close() error { return nil }

// CreateTunnel makes one VXLAN tunnel end.
func CreateTunnel(t Tunnel) error { return errUnsupported }
