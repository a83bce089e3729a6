package endpoint

import (
	"errors"
	"fmt"
)

// Access is a set of memory-region access flags.
type Access uint8

// Access flags. Local read is always allowed.
const (
	AccessLocalWrite   Access = 1 << iota // the NIC may write it for local operations (RECV, READ responses)
	AccessRemoteWrite                     // peers may RDMA WRITE into it
	AccessRemoteRead                      // peers may RDMA READ from it
	AccessRemoteAtomic                    // peers may run atomics on it
)

// PD is a protection domain: memory regions and queue pairs of one PD can
// be used together only.
type PD struct {
	nic *NIC
	id  uint32
}

// MR is a registered memory region. Its memory is Buf when backed, or only
// Length bytes of address space in payload-free runs (nothing is stored).
type MR struct {
	pd     *PD
	Addr   uint64 // virtual address of the first byte
	Length uint64
	LKey   uint32
	RKey   uint32
	Access Access
	// Buf backs the region (nil for a payload-free region).
	Buf  []byte
	dead bool
}

// AllocPD allocates a protection domain.
func (n *NIC) AllocPD() *PD {
	n.nextPD++
	return &PD{nic: n, id: n.nextPD}
}

// RegMR registers buf with the given access. The region gets a virtual
// address of its own on this NIC.
func (pd *PD) RegMR(buf []byte, access Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, errors.New("register memory: empty buffer")
	}
	return pd.reg(buf, uint64(len(buf)), access), nil
}

// RegMRLen registers length bytes of payload-free address space: WRITE and
// READ move lengths, not data.
func (pd *PD) RegMRLen(length uint64, access Access) (*MR, error) {
	if length == 0 {
		return nil, errors.New("register memory: zero length")
	}
	return pd.reg(nil, length, access), nil
}

// RegMRAt registers buf as the region that starts at virtual address
// addr: a program's own address for its memory, as verbs name it (the
// lab's verbs server maps the program's pages into buf). Regions are
// found by key, so addresses of different regions may overlap.
func (pd *PD) RegMRAt(buf []byte, addr uint64, access Access) (*MR, error) {
	if len(buf) == 0 {
		return nil, errors.New("register memory: empty buffer")
	}
	if addr+uint64(len(buf)) < addr {
		return nil, fmt.Errorf("register memory: [%#x,+%d) wraps the address space", addr, len(buf))
	}
	mr := pd.reg(buf, uint64(len(buf)), access)
	mr.Addr = addr
	return mr, nil
}

// A region's keys: LKey is its index (the NIC's count of registrations)
// over eight bits of a per-NIC salt; RKey is LKey with rkeyFlip's bits
// flipped, so the two differ and neither alone names the other's region.
const rkeyFlip = 0x5A5A00

// keyIndex returns the index part of an LKey (the table's number).
func keyIndex(lkey uint32) uint32 { return lkey >> 8 }

func (pd *PD) reg(buf []byte, length uint64, access Access) *MR {
	n := pd.nic
	n.nextKey++
	key := n.nextKey<<8 | uint32(n.keySalt)
	mr := &MR{pd: pd, Addr: n.nextVA, Length: length, LKey: key, RKey: key ^ rkeyFlip, Access: access, Buf: buf}
	n.nextVA += (length + 0xFFFF) &^ 0xFFFF // 64 KiB aligned, with a gap
	n.nextVA += 0x10000
	n.mrs.Put(keyIndex(mr.LKey), mr)
	return mr
}

// Dereg deregisters the region; later accesses through its keys fail.
func (mr *MR) Dereg() {
	mr.dead = true
	mr.pd.nic.mrs.Delete(keyIndex(mr.LKey))
}

// errAccess is the class of faults on a memory access.
var (
	errBadKey    = errors.New("invalid key")
	errBounds    = errors.New("out of bounds")
	errPerm      = errors.New("access not permitted")
	errWrongPD   = errors.New("protection domain mismatch")
	errTooLong   = errors.New("message longer than the receive buffer")
	errNoRecv    = errors.New("no receive WQE")
	errBadOpcode = errors.New("unexpected opcode")
)

// lookup finds the region for key (local or remote) and checks that
// [addr, addr+length) lies in it, that it belongs to pd and that it grants
// need.
func (n *NIC) lookup(key uint32, remote bool, pd *PD, addr, length uint64, need Access) (*MR, error) {
	var mr *MR
	if remote {
		if mr, _ = n.mrs.Get(keyIndex(key ^ rkeyFlip)); mr != nil && mr.RKey != key {
			mr = nil
		}
	} else if mr, _ = n.mrs.Get(keyIndex(key)); mr != nil && mr.LKey != key {
		mr = nil
	}
	switch {
	case mr == nil || mr.dead:
		return nil, fmt.Errorf("key %#x: %w", key, errBadKey)
	case pd != nil && mr.pd != pd:
		return nil, fmt.Errorf("key %#x: %w", key, errWrongPD)
	case addr < mr.Addr || addr+length > mr.Addr+mr.Length || addr+length < addr:
		return nil, fmt.Errorf("key %#x: [%#x,+%d) not in [%#x,+%d): %w", key, addr, length, mr.Addr, mr.Length, errBounds)
	case mr.Access&need != need:
		return nil, fmt.Errorf("key %#x: %w", key, errPerm)
	}
	return mr, nil
}

// slice returns the bytes of [addr, addr+length) in mr, or nil for a
// payload-free or deregistered region: a WR still in flight when its
// region went away moves zeros and places nothing (the memory behind a
// program's region may be unmapped once it is deregistered).
func (mr *MR) slice(addr, length uint64) []byte {
	if mr.Buf == nil || mr.dead {
		return nil
	}
	off := addr - mr.Addr
	return mr.Buf[off : off+length]
}
