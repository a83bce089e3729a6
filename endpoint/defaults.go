package endpoint

import (
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/endpoint/cc/credit"
	"github.com/rocelab/rocelab/endpoint/cc/dcqcn"
	"github.com/rocelab/rocelab/endpoint/cc/none"
	"github.com/rocelab/rocelab/wire"
)

// What both drivers (the emulation's endpoint nodes and the simulator's
// labs) build their NICs from, in one place.

// CCRegistry returns the congestion control every rocelab NIC offers:
// none, dcqcn and credit.
func CCRegistry() *cc.Registry {
	return cc.NewRegistry(none.Algorithm(), dcqcn.Algorithm(), credit.Algorithm())
}

// rdmaOverhead is what a WRITE's first packet adds to its payload inside
// the IP MTU: IPv4, UDP, BTH, RETH and ICRC.
const rdmaOverhead = wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + wire.RETHLen + wire.ICRCLen

// PayloadMTU returns the largest power of two in [256, 4096] (the RDMA
// path MTUs) whose packets fit an IP MTU of ipMTU; 256, the NIC's floor,
// when none does.
func PayloadMTU(ipMTU int) int {
	m := 4096
	for m > 256 && m+rdmaOverhead > ipMTU {
		m /= 2
	}
	return m
}
