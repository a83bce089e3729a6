// Package links creates the wires of an emulation lab: veth pairs whose
// ends sit directly in the nodes' network namespaces, with the lab's
// names, MACs, MTU and alias tags, and with every offload turned off.
//
// # Why offloads are off
//
// The nodes read and write frames on AF_PACKET sockets. With segmentation
// offloads (TSO/GSO/GRO) on, a veth carries 64 KB TCP super-frames that no
// wire of the modelled fabric could carry, and the switch model would see
// one packet where there are forty. With checksum offload on, frames are
// handed over with CHECKSUM_PARTIAL and a wrong checksum in their bytes,
// which a userspace forwarder would copy as is. With VLAN offloads on, the
// tag travels beside the frame instead of in it. So Create turns all of
// them off on both ends (ethtool ioctls, SIOCETHTOOL with
// ETHTOOL_SFEATURES, from a socket opened in the end's namespace), and
// Features reads them back (ETHTOOL_GFEATURES).
//
// Subfolders: linkstest makes the veth pairs of tests.
package links
