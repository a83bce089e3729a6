package testbench

import "github.com/rocelab/rocelab/wire"

// Counter is a sink that counts what reaches it.
type Counter struct {
	// Packets and Bytes count every frame received (Len bytes).
	Packets, Bytes int64
	// CE counts frames received with ECN Congestion Experienced.
	CE int64
	// BySrcPort counts packets per UDP source port (the flow's entropy).
	BySrcPort map[uint16]int64
	// OnReceive, if set, sees every frame counted.
	OnReceive func(p *wire.Packet)
}

var _ wire.Sink = (*Counter)(nil)

// Receive counts p.
func (c *Counter) Receive(p *wire.Packet) {
	c.Packets++
	c.Bytes += int64(p.Len)
	if p.ECN == 3 {
		c.CE++
	}
	if c.BySrcPort == nil {
		c.BySrcPort = make(map[uint16]int64)
	}
	c.BySrcPort[p.SrcPort]++
	if c.OnReceive != nil {
		c.OnReceive(p)
	}
}
