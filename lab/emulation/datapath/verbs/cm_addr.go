package verbs

import (
	"net/netip"
	"slices"
)

// Host is one host of the lab as rdma_cm resolves it: a program names a
// peer by any of its addresses or its name, and gets the peer's RDMA NIC
// on the same rail as the local NIC it connects from.
type Host struct {
	Name string `json:"name"`
	// Addrs are the host's other addresses (front-end, loopback): a
	// program that learnt one of them (qperf's control connection,
	// /etc/hosts) connects to the host's NIC through it.
	Addrs []netip.Addr `json:"addrs,omitempty"`
	NICs  []HostNIC    `json:"nics"`
}

// HostNIC is one RDMA NIC of a Host: its port's name (gpu0) and
// back-end address.
type HostNIC struct {
	Port string     `json:"port"`
	IP   netip.Addr `json:"ip"`
}

// nicByIP is the index of the local NIC whose address is ip, or -1.
func (s *Server) nicByIP(ip netip.Addr) int {
	for i, n := range s.opts.NICs {
		if n.NIC.IP() == ip.Unmap() {
			return i
		}
	}
	return -1
}

// isSelf reports whether ip is one of this host's addresses that is no
// NIC's (front-end, loopback): binding to it binds every NIC.
func (s *Server) isSelf(ip netip.Addr) bool {
	if ip.Unmap().IsLoopback() {
		return true
	}
	for _, h := range s.opts.Hosts {
		if h.Name == s.opts.HostName && slices.Contains(h.Addrs, ip.Unmap()) {
			return true
		}
	}
	return false
}

// resolve finds the NIC a connection from local (-1: any) to dst leaves
// by and the peer NIC's address: dst itself when it is a NIC's address,
// else the NIC on the local NIC's rail (its port name) of the host that
// has dst among its addresses or as its name. ok is false for an address
// no host of the lab has.
func (s *Server) resolve(local int, dst netip.Addr) (nic int, peer netip.Addr, ok bool) {
	dst = dst.Unmap()
	var host *Host
	for i := range s.opts.Hosts {
		h := &s.opts.Hosts[i]
		for _, n := range h.NICs {
			if n.IP == dst {
				return s.nearest(local, dst), dst, true
			}
		}
		if slices.Contains(h.Addrs, dst) {
			host = h
		}
	}
	if host == nil || len(host.NICs) == 0 {
		// Not in the lab's table (a node run alone): a NIC's
		// address of this fabric is taken as it is.
		if len(s.opts.Hosts) == 0 && dst.IsValid() && !dst.IsUnspecified() && !dst.IsLoopback() {
			return s.nearest(local, dst), dst, true
		}
		return -1, netip.Addr{}, false
	}
	if local >= 0 {
		port := portPart(s.opts.NICs[local].Name)
		for _, n := range host.NICs {
			if n.Port == port {
				return local, n.IP, true
			}
		}
		return local, host.NICs[0].IP, true
	}
	for i, ln := range s.opts.NICs {
		for _, n := range host.NICs {
			if n.Port == portPart(ln.Name) {
				return i, n.IP, true
			}
		}
	}
	return s.nearest(-1, host.NICs[0].IP), host.NICs[0].IP, true
}

// nearest is local if set, else the NIC whose address shares the longest
// prefix with dst (the NIC on dst's rail).
func (s *Server) nearest(local int, dst netip.Addr) int {
	if local >= 0 || len(s.opts.NICs) == 0 {
		return local
	}
	best, bestLen := 0, -1
	d := dst.As16()
	for i, n := range s.opts.NICs {
		a := n.NIC.IP().As16()
		l := 0
		for l < 128 && (a[l/8]>>(7-l%8))&1 == (d[l/8]>>(7-l%8))&1 {
			l++
		}
		if l > bestLen {
			best, bestLen = i, l
		}
	}
	return best
}
