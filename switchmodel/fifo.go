package switchmodel

import "github.com/rocelab/rocelab/wire"

// entry is a packet in the buffer with the model's own metadata: where its
// bytes are accounted on the ingress side, and whether it was trimmed.
// wire.Packet stays the descriptor shared with the rest of the lab.
type entry struct {
	p       *wire.Packet
	size    int32  // bytes accounted (p.Len when admitted)
	in      uint16 // ingress port index (New refuses more than MaxPorts)
	pg      uint8  // ingress priority group
	trimmed bool
}

// fifo is a growable ring of entries; values, so that queueing allocates
// only when a queue reaches a new high-water mark.
type fifo struct {
	buf   []entry
	head  int32
	n     int32
	bytes int64
}

func (f *fifo) push(e entry) {
	if int(f.n) == len(f.buf) {
		f.grow()
	}
	f.buf[int(f.head+f.n)&(len(f.buf)-1)] = e
	f.n++
	f.bytes += int64(e.size)
}

func (f *fifo) grow() {
	size := 2 * len(f.buf)
	if size == 0 {
		size = 16
	}
	nb := make([]entry, size)
	for i := range int(f.n) {
		nb[i] = f.buf[(int(f.head)+i)&(len(f.buf)-1)]
	}
	f.buf, f.head = nb, 0
}

// front returns the oldest entry; f must not be empty.
func (f *fifo) front() *entry { return &f.buf[f.head] }

func (f *fifo) pop() entry {
	e := f.buf[f.head]
	f.buf[f.head] = entry{}
	f.head = (f.head + 1) & int32(len(f.buf)-1)
	f.n--
	f.bytes -= int64(e.size)
	return e
}
