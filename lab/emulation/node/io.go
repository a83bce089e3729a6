package node

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
)

// OpenIO opens an AF_PACKET socket on every port's interface (in
// cfg.NetNS) and a Poller watching them.
func OpenIO(cfg Config) (IO, error) {
	ios, err := openIOs([]Config{cfg}, false)
	if err != nil {
		return IO{}, err
	}
	return ios[0], nil
}

// openIOs opens the ports of every node of cfgs and one Poller watching
// them all, numbered in order across the nodes (a Group's loop numbers
// its ports the same way). Each IO lists its node's ports; the first one
// carries the Waiter, and its Close releases everything. alone says the
// loop is the only one of its process (Run, RunGroup): its Poller then
// keeps its processor while it waits (afpacket.Poller.SetKeepProcessor)
// if GOMAXPROCS leaves another for the rest of the process.
func openIOs(cfgs []Config, alone bool) ([]IO, error) {
	var conns []*afpacket.Conn
	// The sockets close in parallel: closing an AF_PACKET socket waits for
	// a network-wide RCU grace period (synchronize_net), about 10 ms on a
	// busy machine, and concurrent waits share one. One after the other,
	// a 64-port switch took 0.6 s to exit and a lab's destroy waited on
	// it.
	closeAll := func() error {
		errs := make([]error, len(conns))
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Go(func() { errs[i] = c.Close() })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	ios := make([]IO, len(cfgs))
	for k, cfg := range cfgs {
		for _, pc := range cfg.Ports {
			c, err := afpacket.Open(cfg.NetNS, pc.IfName, nil)
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
			}
			conns = append(conns, c)
			ios[k].Ports = append(ios[k].Ports, c)
			var mac [6]byte
			copy(mac[:], c.HardwareAddr())
			ios[k].MACs = append(ios[k].MACs, mac)
		}
	}
	poller, err := afpacket.NewPoller()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("node %s: %w", cfgs[0].Name, err)
	}
	for i, c := range conns {
		if err := poller.Add(c, i); err != nil {
			poller.Close()
			closeAll()
			return nil, fmt.Errorf("node %s: port %s: %w", cfgs[0].Name, c.Interface(), err)
		}
	}
	poller.SetKeepProcessor(alone && runtime.GOMAXPROCS(0) >= 2)
	ios[0].Waiter = pollWaiter{poller}
	ios[0].Close = func() error { return errors.Join(poller.Close(), closeAll()) }
	return ios, nil
}

// pollWaiter adapts an afpacket.Poller to emu.Waiter.
type pollWaiter struct{ p *afpacket.Poller }

var _ emu.QuietWaiter = pollWaiter{}

func (w pollWaiter) Wait(timeout time.Duration, ready []int) ([]int, error) {
	ready, _, err := w.p.Wait(timeout, ready)
	return ready, err
}

func (w pollWaiter) Wake() error { return w.p.Wake() }

func (w pollWaiter) WaitQuiet(timeout time.Duration, ready []int) ([]int, error) {
	ready, _, err := w.p.WaitQuiet(timeout, ready)
	return ready, err
}
