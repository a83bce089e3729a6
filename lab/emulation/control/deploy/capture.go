package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// ProcessNodes returns the nodes of lab (lab "": the only deployed lab)
// under root that run a node process, or just node when it is not "".
func ProcessNodes(root, lab, nodeName string) (*Lab, []Node, error) {
	if nodeName != "" {
		l, n, err := FindNode(root, lab, nodeName)
		if err != nil {
			return nil, nil, err
		}
		if n.Socket == "" {
			return nil, nil, fmt.Errorf("node %s runs no node process", nodeName)
		}
		return l, []Node{*n}, nil
	}
	l, err := PickLab(root, lab)
	if err != nil {
		return nil, nil, err
	}
	var out []Node
	for _, n := range l.Nodes {
		if n.Socket != "" {
			out = append(out, n)
		}
	}
	return l, out, nil
}

// ErrNoPort is returned for a port a node does not have.
var ErrNoPort = errors.New("no such port")

// CaptureOptions configure Capture.
type CaptureOptions struct {
	// File receives the pcap.
	File string
	// Frames stops the capture after this many frames (0: no limit).
	Frames int
	// Dir is "rx", "tx" or "both" ("": both), seen from the node's port.
	Dir string
	// Duration stops the capture after this long (0: no limit; then
	// Frames or ctx must end it).
	Duration time.Duration
	// Waiting, if set, is called once when no frame has come for a while:
	// the port is idle, the capture waits.
	Waiting func(target string)
}

// captureIdle is how long a capture sees no frame before it says it waits;
// captureDead how long its node may not answer before it gives up.
const (
	captureIdle = 2 * time.Second
	captureDead = 5 * time.Second
)

// CaptureResult is what a capture wrote.
type CaptureResult struct {
	Node   string `json:"node"`
	Port   string `json:"port"`
	IfName string `json:"ifname"`
	File   string `json:"file"`
	Frames int    `json:"frames"`
}

// Capture records the frames that port of node (target "NODE:PORT"; the
// port by its topology name or interface name) receives and sends, as the
// node's model saw them, into o.File: until o.Frames frames, o.Duration or
// the end of ctx, whichever comes first. The node writes into the lab's
// run directory (which a docker node shares with the host), and the file
// is moved to o.File afterwards.
func Capture(ctx context.Context, root, lab, target string, o CaptureOptions) (CaptureResult, error) {
	nodeName, port, ok := strings.Cut(target, ":")
	if !ok || nodeName == "" || port == "" {
		return CaptureResult{}, fmt.Errorf("capture %q: want NODE:PORT: %w", target, ErrNoPort)
	}
	l, n, err := FindNode(root, lab, nodeName)
	if err != nil {
		return CaptureResult{}, err
	}
	if n.Socket == "" {
		return CaptureResult{}, fmt.Errorf("node %s runs no node process to capture on", nodeName)
	}
	if l.Runtime == RuntimeMachines {
		return CaptureResult{}, fmt.Errorf("capture %s: %w", target, ErrSpansMachines)
	}
	ifname := ""
	for _, pi := range n.Interfaces {
		p, ifn, _ := strings.Cut(pi, "=")
		if p == port || ifn == port {
			ifname = ifn
			port = p
		}
	}
	if ifname == "" {
		return CaptureResult{}, fmt.Errorf("node %s: %w %s (ports: %s)", nodeName, ErrNoPort, port, strings.Join(n.Interfaces, " "))
	}
	tmp, err := os.CreateTemp(l.Dir, "capture-"+nodeName+"-"+port+"-*.pcap")
	if err != nil {
		return CaptureResult{}, fmt.Errorf("capture: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	c := nodeapi.NewClient(n.Socket)
	defer c.Close()
	res := CaptureResult{Node: nodeName, Port: port, IfName: ifname, File: o.File}
	if _, err := c.StartCapture(ctx, nodeapi.CaptureRequest{Port: ifname, File: tmp.Name(), MaxFrames: o.Frames, Dir: o.Dir}); err != nil {
		return res, fmt.Errorf("capture on %s: %w", target, err)
	}
	var deadline <-chan time.Time
	if o.Duration > 0 {
		tm := time.NewTimer(o.Duration)
		defer tm.Stop()
		deadline = tm.C
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start, lastOK, frames, told := time.Now(), time.Now(), 0, false
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-deadline:
			break wait
		case <-tick.C:
			ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
			info, err := c.Info(ictx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					break wait
				}
				if time.Since(lastOK) >= captureDead {
					return res, fmt.Errorf("capture on %s: node %s stopped answering (%v): %w", target, nodeName, err, ErrNodeDead)
				}
				continue
			}
			lastOK = time.Now()
			for _, cs := range info.Captures {
				if cs.Port != ifname || cs.File != tmp.Name() {
					continue
				}
				frames = cs.Frames
				if cs.Done {
					break wait
				}
			}
			if o.Waiting != nil && !told && frames == 0 && time.Since(start) >= captureIdle {
				told = true
				o.Waiting(target)
			}
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := c.StopCapture(sctx, ifname)
	if err != nil {
		return res, fmt.Errorf("stop capture on %s: %w", target, err)
	}
	res.Frames = st.Frames
	if st.Error != "" {
		return res, fmt.Errorf("capture on %s: %s", target, st.Error)
	}
	if err := moveFile(tmp.Name(), o.File); err != nil {
		return res, fmt.Errorf("capture: %w", err)
	}
	return res, nil
}

// moveFile renames src to dst, or copies it across file systems. A
// capture holds the lab's traffic: it is made 0600, less what the umask
// takes (os.CreateTemp's mode, kept by the rename), as any private file.
func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
