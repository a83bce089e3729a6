package node

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire/pcap"
)

// capture is an emu.Tap writing one port's frames to a pcap file, as the
// model received and sent them. Timestamps are the loop's start plus the
// frame's fabric time, so intervals in the capture are in real units
// (400G serialization, 1 µs hops), not dilated wall time. It runs on the
// loop goroutine.
type capture struct {
	n       *Node
	port    int
	path    string
	dir     string // rx, tx or both
	max     int
	frames  int
	started time.Time
	f       *os.File
	bw      *bufio.Writer
	w       *pcap.Writer
	err     error
	done    bool
}

// snapLen is the capture's snapshot length (whole jumbo frames).
const snapLen = 65535

func newCapture(n *Node, port int, path, dir string, max int) (*capture, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := pcap.NewWriter(bw, snapLen)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %w", err)
	}
	return &capture{n: n, port: port, path: path, dir: dir, max: max, started: time.Now(), f: f, bw: bw, w: w}, nil
}

// Frame implements emu.Tap.
func (c *capture) Frame(dir emu.Dir, at clock.Time, frame []byte) {
	if c.done || (c.dir != "both" && c.dir != dir.String()) {
		return
	}
	ts := c.n.loop.Start().Add(time.Duration(int64(at) / int64(clock.Nanosecond)))
	if err := c.w.WriteFrame(ts, frame, len(frame)); err != nil {
		c.err = err
		c.stop()
		return
	}
	c.frames++
	if c.max > 0 && c.frames >= c.max {
		c.stop()
	}
}

// stop detaches the tap and closes the file; the capture stays listed as
// done until it is stopped through the API or replaced.
func (c *capture) stop() {
	if c.done {
		return
	}
	c.n.loop.SetTap(c.n.base+c.port, nil)
	c.close()
}

func (c *capture) close() {
	if c.done {
		return
	}
	c.done = true
	if err := c.bw.Flush(); err != nil && c.err == nil {
		c.err = err
	}
	if err := c.f.Close(); err != nil && c.err == nil {
		c.err = err
	}
}

func (c *capture) status() nodeapi.CaptureStatus {
	s := nodeapi.CaptureStatus{Port: c.n.cfg.Ports[c.port].IfName, File: c.path, Dir: c.dir, MaxFrames: c.max, Frames: c.frames, Done: c.done}
	if c.err != nil {
		s.Error = c.err.Error()
	}
	return s
}
