package afpacket

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxRing is a PACKET_RX_RING of TPACKET_V2 frames mapped into the
// process: the kernel copies each received frame into the next free slot
// and sets its status to TP_STATUS_USER; the reader copies it out and
// hands the slot back (TP_STATUS_KERNEL). Reading costs no system call.
//
// V2 rather than V3: a V3 block reaches the reader only when it is full or
// its retire timer (at least a millisecond) fires, which would delay a
// lone frame — a pause, say — by up to that timer; a V2 slot is the
// reader's as soon as the kernel has filled it.
type rxRing struct {
	mem       []byte
	frameSize int
	frames    int
	perBlock  int // slots in each block of blockSize bytes (slots do not cross blocks)
	blockSize int
	next      int // the slot to look at next
}

// ringHdrLen is TPACKET_ALIGN(sizeof(tpacket2_hdr)) + sizeof(sockaddr_ll):
// the kernel's tp_hdrlen for TPACKET_V2.
const ringHdrLen = 32 + unix.SizeofSockaddrLinklayer

// ringMacOff is where the kernel puts a frame's first byte in its slot
// (tpacket_rcv: TPACKET_ALIGN(tp_hdrlen + 16) - 14, for an Ethernet
// header of 14 bytes).
const ringMacOff = (ringHdrLen+16+unix.TPACKET_ALIGNMENT-1)&^(unix.TPACKET_ALIGNMENT-1) - 14

// ringBlock is the size of one ring block: slots do not cross blocks.
const ringBlock = 1 << 16

// setupRing asks the kernel for a TPACKET_V2 receive ring of about bytes
// bytes, with slots for frames of up to maxFrame bytes, and maps it.
func (c *Conn) setupRing(bytes, maxFrame int) error {
	fd := c.fd
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return fmt.Errorf("PACKET_VERSION: %w", err)
	}
	fs := (ringMacOff + maxFrame + unix.TPACKET_ALIGNMENT - 1) &^ (unix.TPACKET_ALIGNMENT - 1)
	block := ringBlock
	for block < fs {
		block <<= 1
	}
	nblocks := max(1, (bytes+block-1)/block)
	perBlock := block / fs
	req := unix.TpacketReq{
		Block_size: uint32(block), Block_nr: uint32(nblocks),
		Frame_size: uint32(fs), Frame_nr: uint32(perBlock * nblocks),
	}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fmt.Errorf("PACKET_RX_RING (%d blocks of %d B, slots of %d B): %w", nblocks, block, fs, err)
	}
	mem, err := unix.Mmap(fd, 0, block*nblocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap rx ring: %w", err)
	}
	// Slots are laid out block by block: slot() indexes through the block.
	c.ring = &rxRing{mem: mem, frameSize: fs, frames: perBlock * nblocks, perBlock: perBlock, blockSize: block}
	return nil
}

// slot returns the header of slot i.
func (c *Conn) slot(i int) *unix.Tpacket2Hdr {
	r := c.ring
	off := (i/r.perBlock)*r.blockSize + (i%r.perBlock)*r.frameSize
	return (*unix.Tpacket2Hdr)(unsafe.Pointer(&r.mem[off]))
}

// slotStatus reads a slot's status as the kernel publishes it.
func slotStatus(h *unix.Tpacket2Hdr) uint32 { return atomic.LoadUint32(&h.Status) }

// readRing copies up to len(bufs) frames out of the ring (see
// ReadBatchStamped).
func (c *Conn) readRing(bufs [][]byte, lens []int, stamps []int64) int {
	r := c.ring
	got := 0
	for got < len(bufs) {
		h := c.slot(r.next)
		st := slotStatus(h)
		if st&unix.TP_STATUS_USER == 0 {
			break
		}
		base := unsafe.Pointer(h)
		off := uintptr(h.Mac)
		n := int(h.Snaplen)
		if int(off)+n > r.frameSize {
			n = max(0, r.frameSize-int(off))
		}
		data := unsafe.Slice((*byte)(unsafe.Add(base, off)), n)
		b := bufs[got]
		l := copy(b, data)
		if st&unix.TP_STATUS_VLAN_VALID != 0 {
			tpid := h.Vlan_tpid
			if st&unix.TP_STATUS_VLAN_TPID_VALID == 0 || tpid == 0 {
				tpid = unix.ETH_P_8021Q
			}
			l = insertVLAN(b, l, tpid, h.Vlan_tci)
		}
		want := int(h.Len)
		if st&unix.TP_STATUS_VLAN_VALID != 0 {
			want += vlanHdrLen
		}
		if want > len(b) || n < int(h.Len) {
			c.stats.Truncated++
		}
		l = min(l, len(b))
		lens[got] = l
		if stamps != nil {
			stamps[got] = 0
			if !c.cfg.NoTimestamps {
				stamps[got] = int64(h.Sec)*1e9 + int64(h.Nsec)
			}
		}
		atomic.StoreUint32(&h.Status, unix.TP_STATUS_KERNEL)
		r.next++
		if r.next == r.frames {
			r.next = 0
		}
		c.stats.RxFrames++
		c.stats.RxBytes += uint64(l)
		got++
	}
	return got
}

// closeRing unmaps the ring.
func (c *Conn) closeRing() error {
	if c.ring == nil {
		return nil
	}
	err := unix.Munmap(c.ring.mem)
	c.ring = nil
	return err
}
