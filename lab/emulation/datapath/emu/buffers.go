package emu

import "github.com/rocelab/rocelab/wire"

// The loop's descriptors: a free list of receive buffers that models
// give back (see the package doc, "Buffer ownership").

// TakeBack says that port i's model gives back every packet it receives
// (descriptor and bytes) once it is done with it, through the function
// returned (an endpoint's NIC: endpoint.Options.ReturnRx): the port then
// hands it frames in the loop's own descriptors, uncopied, and the loop
// reuses them. Without it a Keep port copies each frame into a buffer of
// the frame's length (see the package doc, "Buffer ownership"). Call it
// before Run; the function runs on the loop goroutine.
func (l *Loop) TakeBack(i int) func(p *wire.Packet) {
	l.ports[i].returns = true
	return l.reuse
}

// reuse puts a received packet a model gave back on the free list, if its
// buffer is one of the loop's.
func (l *Loop) reuse(p *wire.Packet) {
	if cap(p.Raw) != l.bufSize || len(l.free) >= maxFree {
		return
	}
	*p = wire.Packet{Raw: p.Raw[:l.bufSize]}
	l.free = append(l.free, p)
}

// get returns a descriptor with an empty buffer of BufSize bytes.
func (l *Loop) get() *wire.Packet {
	if n := len(l.free); n > 0 {
		p := l.free[n-1]
		l.free = l.free[:n-1]
		return p
	}
	return &wire.Packet{Raw: make([]byte, l.bufSize)}
}

// scratchBufs returns the loop's scratch receive buffers (ReadBatch of
// BufSize bytes), which the ports of endpoints read into.
func (l *Loop) scratchBufs() [][]byte {
	if l.scratch == nil {
		l.scratch = make([][]byte, l.batch)
		for i := range l.scratch {
			l.scratch[i] = make([]byte, l.bufSize)
		}
	}
	return l.scratch
}

// maxFree bounds the free list; beyond it, descriptors go to the GC.
const maxFree = 8192

// put recycles a descriptor the model has given back, if it is one of ours.
func (l *Loop) put(p *wire.Packet) {
	if l.recycle {
		l.reuse(p)
	}
}
