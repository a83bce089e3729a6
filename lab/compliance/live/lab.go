package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// LabOptions configure Attach.
type LabOptions struct {
	// Root and Lab name the deployed lab (Root "": deploy's default; Lab
	// "": the only lab that has Node).
	Root, Lab string
	// Node is an endpoint node of the lab (a host or a storage node), NIC
	// one of its RDMA NICs: its port name ("gpu1") or NIC name
	// ("host1:gpu1"); "" is its first.
	Node, NIC string
	// Jitter is as for Options (0: DefaultJitter).
	Jitter time.Duration
}

// Attach makes an RDMA NIC of a deployed lab's endpoint node the IUT, as
// the lab runs it: same process, same scale k, the lab's addresses.
// The tester takes the NIC's link at the switch's end — a socket of its
// own on the switch port's interface, in the switch's namespace — while a
// "down" fault on that switch port keeps the fabric out of the exchange:
// what the switch would send the NIC is dropped, and what the NIC sends
// the tester (an address the fabric has no route to) goes nowhere else.
// Close removes the fault; the node, its other NICs and the rest of the
// lab are left as they were. It needs root.
func Attach(ctx context.Context, o LabOptions) (_ *IUT, err error) {
	if o.Jitter == 0 {
		o.Jitter = DefaultJitter
	}
	l, n, err := deploy.FindNode(o.Root, o.Lab, o.Node)
	if err != nil {
		return nil, fmt.Errorf("compliance: %w", err)
	}
	if n.Socket == "" || n.Config == "" {
		return nil, fmt.Errorf("compliance: node %s of lab %s runs no endpoint (no RDMA NIC)", n.Name, l.Name)
	}
	cfg, err := node.Load(n.Config)
	if err != nil {
		return nil, fmt.Errorf("compliance: %w", err)
	}
	if cfg.Kind != nodeapi.KindEndpoint || len(cfg.NICs) == 0 {
		return nil, fmt.Errorf("compliance: node %s of lab %s is a %s node, not an endpoint with RDMA NICs", n.Name, l.Name, cfg.Kind)
	}
	i, err := nicIndex(cfg, o.NIC)
	if err != nil {
		return nil, fmt.Errorf("compliance: node %s: %w", n.Name, err)
	}
	sw, swPort, err := linkPeer(l, cfg.Ports[i].PeerMAC)
	if err != nil {
		return nil, fmt.Errorf("compliance: %s: %w", cfg.NICs[i].Name, err)
	}
	peerMAC, err := net.ParseMAC(cfg.Ports[i].PeerMAC)
	if err != nil {
		return nil, fmt.Errorf("compliance: %s: peer MAC: %w", cfg.NICs[i].Name, err)
	}
	u := &IUT{o: Options{Scale: l.Scale, Jitter: o.Jitter}, peerMAC: peerMAC, nic: cfg.NICs[i].Name,
		logPath: n.Log, proc: proc.Process{PID: n.PID, StartTime: n.StartTime}, exited: make(chan struct{})}
	u.desc = fmt.Sprintf("%s of lab %s (rocelab endpoint node, k=%d, pid %d; tester on %s:%s, held down)",
		u.nic, l.Name, l.Scale, n.PID, sw.Name, swPort.IfName)
	defer func() {
		if err != nil {
			err = errors.Join(err, u.Close())
		}
	}()
	if !u.proc.Alive() {
		return nil, fmt.Errorf("compliance: node %s of lab %s is dead (rocelab restart %s)", n.Name, l.Name, n.Name)
	}
	u.watchProcess()
	u.client = nodeapi.NewClient(n.Socket)
	u.undo = append(u.undo, func() error { u.client.Close(); return nil })
	if _, err := u.client.Info(ctx); err != nil {
		return nil, fmt.Errorf("compliance: node %s: %w", n.Name, err)
	}
	// Fabric time 0 at Attach, not at the node's start: the suite uses
	// only differences, and a node up for months would overflow the
	// picosecond arithmetic.
	u.epoch = time.Now().UnixNano()
	if err := u.idle(ctx, idleWindow); err != nil {
		return nil, fmt.Errorf("compliance: %w", err)
	}
	swc := nodeapi.NewClient(sw.Socket)
	fi, err := holdDown(ctx, swc, swPort.IfName)
	if err != nil {
		swc.Close()
		return nil, fmt.Errorf("compliance: hold %s:%s down: %w", sw.Name, swPort.IfName, err)
	}
	u.undo = append(u.undo, func() error {
		defer swc.Close()
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := swc.RemoveFault(rctx, fi.ID); err != nil {
			return fmt.Errorf("bring %s:%s back up (rocelab fault clear %s/%s): %w", sw.Name, swPort.IfName, sw.Name, fi.ID, err)
		}
		return nil
	})
	w, err := openWire(sw.NetNS, swPort.IfName)
	if err != nil {
		return nil, fmt.Errorf("compliance: %w", err)
	}
	u.wire = w
	u.undo = append(u.undo, w.close)
	return u, nil
}

// holdDown puts a "down" fault on the switch port ifname. The switch
// applies a fault even when its caller stops waiting (a timeout, Ctrl-C),
// so on an error it looks for one it may have applied and removes it: a
// port left down would cut the NIC off from the lab.
func holdDown(ctx context.Context, swc *nodeapi.Client, ifname string) (nodeapi.FaultInfo, error) {
	before := map[string]bool{}
	if fs, err := swc.Faults(ctx); err == nil {
		for _, f := range fs {
			before[f.ID] = true
		}
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	fi, err := swc.AddFault(actx, ifname, faults.Spec{Params: faults.Flap{}})
	if err == nil {
		return fi, nil
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if fs, lerr := swc.Faults(rctx); lerr == nil {
		for _, f := range fs {
			if !before[f.ID] && f.Kind == "down" && slices.Contains(f.Ports, ifname) {
				if _, rerr := swc.RemoveFault(rctx, f.ID); rerr != nil {
					err = errors.Join(err, fmt.Errorf("remove fault %s it may have applied: %w", f.ID, rerr))
				}
			}
		}
	}
	return nodeapi.FaultInfo{}, err
}

// idleWindow is how long (wall clock) Attach watches the NIC for frames
// before taking its link.
const idleWindow = 250 * time.Millisecond

// idle fails if the NIC sends frames during window: a perf or collective
// runs through it, whose frames the held-down link would drop and whose
// frames would mix with the cases'.
func (u *IUT) idle(ctx context.Context, window time.Duration) error {
	sent := func() (float64, error) {
		s, err := u.client.Telemetry(ctx)
		return telemetry.Sum(s, "nic_tx_packets_total", telemetry.Label{Name: "node", Value: u.nic}), err
	}
	before, err := sent()
	if err != nil {
		return fmt.Errorf("%s: %w", u.nic, err)
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := sent()
	if err != nil {
		return fmt.Errorf("%s: %w", u.nic, err)
	}
	if after > before {
		return fmt.Errorf("%s is busy: it sent %.0f frames in %v (a perf or collective through it?); test an idle NIC", u.nic, after-before, window)
	}
	return nil
}

// nicIndex finds the NIC want ("" the first) of an endpoint's config.
func nicIndex(cfg node.Config, want string) (int, error) {
	if want == "" {
		return 0, nil
	}
	var names []string
	for i, c := range cfg.NICs {
		if c.Name == want || c.Name == cfg.Name+":"+want {
			return i, nil
		}
		names = append(names, strings.TrimPrefix(c.Name, cfg.Name+":"))
	}
	return 0, fmt.Errorf("no RDMA NIC %q (it has %s)", want, strings.Join(names, ", "))
}

// linkPeer finds the switch port at the other end of a NIC's link: the
// port of a switch node of l whose MAC is mac.
func linkPeer(l *deploy.Lab, mac string) (*deploy.Node, node.PortConfig, error) {
	for i := range l.Nodes {
		m := &l.Nodes[i]
		if m.Config == "" {
			continue
		}
		c, err := node.Load(m.Config)
		if err != nil || c.Kind != nodeapi.KindSwitch {
			continue
		}
		for _, p := range c.Ports {
			if strings.EqualFold(p.MAC, mac) {
				return m, p, nil
			}
		}
	}
	return nil, node.PortConfig{}, fmt.Errorf("no switch port of lab %s has MAC %s: the link does not end at a switch", l.Name, mac)
}

// watchProcess closes u.exited when the lab's node process ends (the
// lab, not the suite, started it), until Close.
func (u *IUT) watchProcess() {
	done := make(chan struct{})
	u.undo = append(u.undo, func() error { close(done); return nil })
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !u.proc.Alive() {
					close(u.exited)
					return
				}
			}
		}
	}()
}
