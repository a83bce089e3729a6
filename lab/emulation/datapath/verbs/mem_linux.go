package verbs

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// piece is one part of a region: len bytes at addr in the program, at
// offset in the memfd fd.
type piece struct {
	addr, len, offset uint64
	fd                int
}

// mapRegion maps the pieces of the program's region [addr, addr+length)
// side by side, as they lie in the program, and returns the whole
// mapping (to unmap) and the region's bytes in it. Each memfd is sealed
// against shrinking first: a program that truncated it later would
// otherwise make the node fault on the missing pages.
func mapRegion(addr, length uint64, pieces []piece) (mem, buf []byte, err error) {
	if length == 0 || len(pieces) == 0 {
		return nil, nil, fmt.Errorf("empty region")
	}
	page := uint64(unix.Getpagesize())
	start := pieces[0].addr
	end := start
	for i, p := range pieces {
		if p.addr != end || p.addr%page != 0 || p.len%page != 0 || p.offset%page != 0 || p.len == 0 {
			return nil, nil, fmt.Errorf("piece %d ([%#x,+%d) at offset %d) is not the next page range", i, p.addr, p.len, p.offset)
		}
		if _, err := unix.FcntlInt(uintptr(p.fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK); err != nil {
			return nil, nil, fmt.Errorf("piece %d: seal its memfd against shrinking: %w", i, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(p.fd, &st); err != nil {
			return nil, nil, fmt.Errorf("piece %d: %w", i, err)
		}
		if uint64(st.Size) < p.offset+p.len {
			return nil, nil, fmt.Errorf("piece %d: its memfd has %d bytes, not %d", i, st.Size, p.offset+p.len)
		}
		end += p.len
	}
	if addr < start || addr+length > end || addr+length < addr {
		return nil, nil, fmt.Errorf("the pieces [%#x,%#x) do not cover the region", start, end)
	}
	mem, err = unix.Mmap(-1, 0, int(end-start), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil, fmt.Errorf("reserve %d bytes: %w", end-start, err)
	}
	base := uintptr(unsafe.Pointer(&mem[0]))
	for i, p := range pieces {
		_, _, e := unix.Syscall6(unix.SYS_MMAP, base+uintptr(p.addr-start), uintptr(p.len),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED, uintptr(p.fd), uintptr(p.offset))
		if e != 0 {
			unix.Munmap(mem)
			return nil, nil, fmt.Errorf("map piece %d: %w", i, e)
		}
	}
	return mem, mem[addr-start : addr-start+length], nil
}

func unmap(mem []byte) {
	if mem != nil {
		unix.Munmap(mem)
	}
}

// ring is a completion queue's ring in memory shared with the program
// (libibverbs/proto.h): the node writes entries and then head; the
// program reads up to head and writes tail. Completions that find the
// ring full wait in pending (loop goroutine).
type ring struct {
	mem     []byte
	mask    uint32
	head    uint32
	pending []cqe
}

func mapRing(fd int, entries uint32) (*ring, error) {
	size := ringEntries + int(entries)*cqeSize
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK); err != nil {
		return nil, fmt.Errorf("seal the ring's memfd: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size < int64(size) {
		return nil, fmt.Errorf("ring memfd has %d bytes, %d entries need %d", st.Size, entries, size)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the ring: %w", err)
	}
	r := &ring{mem: mem, mask: entries - 1}
	r.head = atomic.LoadUint32(r.word(ringHead))
	return r, nil
}

func (r *ring) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }

func (r *ring) put(e cqe) bool {
	tail := atomic.LoadUint32(r.word(ringTail))
	if r.head-tail > r.mask {
		return false
	}
	off := ringEntries + int(r.head&r.mask)*cqeSize
	e.put(r.mem[off : off+cqeSize])
	r.head++
	atomic.StoreUint32(r.word(ringHead), r.head)
	return true
}

// push adds e after any that wait; false if e has to wait too.
func (r *ring) push(e cqe) bool {
	if len(r.pending) == 0 && r.put(e) {
		return true
	}
	r.pending = append(r.pending, e)
	return false
}

// flush moves waiting completions in; true when none waits.
func (r *ring) flush() bool {
	i := 0
	for i < len(r.pending) && r.put(r.pending[i]) {
		i++
	}
	r.pending = append(r.pending[:0], r.pending[i:]...)
	return len(r.pending) == 0
}

func (r *ring) unmap() {
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem = nil
	}
}
