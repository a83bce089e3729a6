package live

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// Defaults of Options.
const (
	// DefaultScale keeps the timing cases meaningful on a loaded machine:
	// the 200 µs timeout is 200 ms of wall clock, and 20 ms of scheduling
	// jitter is 20 µs of fabric time.
	DefaultScale = 1000
	// DefaultJitter is the scheduling jitter (wall clock) the timing
	// checks allow for.
	DefaultJitter = 20 * time.Millisecond
	// Settle is the quiet time (fabric) after each case.
	Settle = 60 * clock.Microsecond
)

// Addresses of the IUT's NIC and of the tester (in namespaces of their
// own: nothing else sees them).
var (
	IUTIP     = netip.MustParseAddr("10.99.0.1")
	TesterIP  = netip.MustParseAddr("10.99.0.2")
	IUTMAC    = net.HardwareAddr{0x02, 0x52, 0x4c, 0xe0, 0, 1}
	TesterMAC = net.HardwareAddr{0x02, 0x52, 0x4c, 0xe0, 0, 2}
)

// Options configure Start.
type Options struct {
	// Binary is the rocelab executable that runs the node (required).
	Binary string
	// Scale is the node's scale k (0: DefaultScale).
	Scale int
	// Jitter is the wall-clock scheduling jitter the timing checks allow
	// for (0: DefaultJitter); Env.Jitter is Jitter/Scale.
	Jitter time.Duration
	// Seed seeds the node's random streams.
	Seed uint64
	// Mutant (tests only) names an endpoint.Mutant the node runs.
	Mutant string
	// HealthTimeout bounds the wait for the node's API (0: 30 s).
	HealthTimeout time.Duration
}

// IUT is a running endpoint node and the tester's wire to it.
type IUT struct {
	o      Options
	ns     [2]string // tester, iut
	ifs    [2]string
	dir    string
	cfg    node.Config
	cmd    *exec.Cmd
	exited chan struct{}
	proc   proc.Process
	client *nodeapi.Client
	wire   *wire
	epoch  int64          // Unix ns of fabric time 0
	undo   []func() error // teardown, last first
	// What differs for a lab's node (Attach): the tester's MAC (the
	// switch port's), the NIC the QPs are made on ("": the node's
	// first), the node's log and how the report names the IUT.
	peerMAC net.HardwareAddr
	nic     string
	logPath string
	desc    string
}

// Start creates two namespaces joined by a veth pair, starts the endpoint
// node on the IUT's end and opens the tester's. On an error it removes
// what it made. It needs root.
func Start(ctx context.Context, o Options) (_ *IUT, err error) {
	if o.Binary == "" {
		return nil, errors.New("compliance live: no rocelab binary")
	}
	if o.Scale == 0 {
		o.Scale = DefaultScale
	}
	if o.Scale < 1 {
		return nil, fmt.Errorf("compliance live: scale %d: must be at least 1", o.Scale)
	}
	if o.Jitter == 0 {
		o.Jitter = DefaultJitter
	}
	if o.HealthTimeout == 0 {
		o.HealthTimeout = 30 * time.Second
	}
	tag := fmt.Sprintf("%04x%02x", os.Getpid()&0xffff, rand.IntN(256))
	u := &IUT{o: o, peerMAC: TesterMAC,
		ns:  [2]string{"rlc-" + tag + "-t", "rlc-" + tag + "-i"},
		ifs: [2]string{"rlc" + tag + "t", "rlc" + tag + "i"}}
	defer func() {
		if err != nil {
			err = errors.Join(err, u.Close())
		}
	}()
	if err := u.setUp(ctx); err != nil {
		return nil, fmt.Errorf("compliance live: %w", err)
	}
	return u, nil
}

// setUp makes each piece, recording how to remove it first.
func (u *IUT) setUp(ctx context.Context) error {
	dir, err := os.MkdirTemp(runBase(), "rocelab-compliance-")
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	u.dir = dir
	u.undo = append(u.undo, func() error { return os.RemoveAll(dir) })
	for _, ns := range u.ns {
		if err := netns.Create(ns); err != nil {
			return err
		}
		u.undo = append(u.undo, func() error { return netns.Delete(ns) })
	}
	v := links.Veth{A: links.End{NetNS: u.ns[0], Name: u.ifs[0], MAC: TesterMAC, NoIPv6: true},
		B: links.End{NetNS: u.ns[1], Name: u.ifs[1], MAC: IUTMAC, NoIPv6: true}}
	if err := links.Create(v); err != nil {
		return err
	}
	u.undo = append(u.undo, func() error { return links.Delete(u.ns[0], u.ifs[0]) })
	if err := u.startNode(ctx); err != nil {
		return err
	}
	w, err := openWire(u.ns[0], u.ifs[0])
	if err != nil {
		return err
	}
	u.wire = w
	u.undo = append(u.undo, w.close)
	return nil
}

// runBase is where run directories go: tmpfs under /run when it can.
func runBase() string {
	if st, err := os.Stat("/run"); err == nil && st.IsDir() {
		return "/run"
	}
	return os.TempDir()
}

// startNode writes the node's config, starts its node process
// (rocelab-node, or `rocelab node`: state.NodeCommand) in the IUT's
// namespace and waits for its API.
func (u *IUT) startNode(ctx context.Context) error {
	u.cfg = node.Config{Kind: nodeapi.KindEndpoint, Name: "iut", Scale: u.o.Scale, Seed: u.o.Seed,
		Socket: filepath.Join(u.dir, "iut.sock"), Mutant: u.o.Mutant,
		Ports: []node.PortConfig{{IfName: u.ifs[1], MAC: IUTMAC.String(), PeerMAC: TesterMAC.String(), Rate: 100 * clock.Gbps}},
		NICs:  []node.NICConfig{{Name: "iut:port0", IP: IUTIP.String(), MTU: 4096}}}
	cfgPath, logPath := filepath.Join(u.dir, "iut.json"), filepath.Join(u.dir, "iut.log")
	u.logPath = logPath
	if err := u.cfg.Write(cfgPath); err != nil {
		return err
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("node log: %w", err)
	}
	defer log.Close()
	argv := state.NodeCommand(u.o.Binary, cfgPath)
	u.cmd = exec.Command(argv[0], argv[1:]...)
	u.cmd.Dir, u.cmd.Stdout, u.cmd.Stderr = u.dir, log, log
	pr, err := netns.Start(u.ns[1], u.cmd)
	if err != nil {
		return err
	}
	u.proc, u.exited = pr, make(chan struct{})
	go func() { u.cmd.Wait(); close(u.exited) }()
	u.undo = append(u.undo, u.stopNode)
	u.client = nodeapi.NewClient(u.cfg.Socket)
	if err := u.waitHealthy(ctx); err != nil {
		return err
	}
	info, err := u.client.Info(ctx)
	if err != nil {
		return fmt.Errorf("node info: %w", err)
	}
	u.epoch = info.Started.UnixNano()
	return nil
}

// waitHealthy polls /health until it answers ok, the node exits or the
// timeout passes; errors carry the node's log.
func (u *IUT) waitHealthy(ctx context.Context) error {
	exited := func() error {
		select {
		case <-u.exited:
			return fmt.Errorf("process (pid %d) exited", u.proc.PID)
		default:
			return nil
		}
	}
	if err := u.client.WaitHealthy(ctx, u.o.HealthTimeout, exited, u.logTail); err != nil {
		return fmt.Errorf("endpoint node: %w", err)
	}
	return nil
}

// logTail is the end of the node's log, for an error.
func (u *IUT) logTail() string { return nodeapi.LogTail(u.logPath, 30) }

// stopNode asks the node to shut down, then signals it.
func (u *IUT) stopNode() error {
	defer u.client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if u.client.Shutdown(ctx) == nil {
		select {
		case <-u.exited:
			return nil
		case <-time.After(5 * time.Second):
		}
	}
	if err := u.proc.Stop(2 * time.Second); err != nil {
		return fmt.Errorf("stop endpoint node: %w", err)
	}
	<-u.exited
	return nil
}

// Close stops the node and removes the veth pair, the namespaces and the
// run directory. It is safe to call twice.
func (u *IUT) Close() error {
	var errs []error
	for i := len(u.undo) - 1; i >= 0; i-- {
		errs = append(errs, u.undo[i]())
	}
	u.undo = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("compliance live: teardown: %w", err)
	}
	return nil
}

// Scale is the node's scale k.
func (u *IUT) Scale() int { return u.o.Scale }

// Jitter is the timing tolerance in fabric time: Options.Jitter / k.
func (u *IUT) Jitter() clock.Duration {
	return clock.Duration(u.o.Jitter.Nanoseconds() * int64(clock.Nanosecond) / int64(u.o.Scale))
}

// Describe names the IUT for a report.
func (u *IUT) Describe() string {
	if u.desc != "" {
		return u.desc
	}
	s := fmt.Sprintf("rocelab endpoint node (emulation, k=%d, pid %d)", u.o.Scale, u.proc.PID)
	if u.o.Mutant != "" {
		s += ", mutant " + u.o.Mutant
	}
	return s
}

// fabric is the fabric time of a wall-clock instant (Unix ns).
func (u *IUT) fabric(ns int64) clock.Time {
	return clock.Time((ns - u.epoch) * int64(clock.Nanosecond) / int64(u.o.Scale))
}

// wall is the wall-clock instant (Unix ns) of fabric time t.
func (u *IUT) wall(t clock.Time) int64 {
	return u.epoch + int64(t)/int64(clock.Nanosecond)*int64(u.o.Scale)
}

// NewEnv returns the factory of the run's per-case Envs.
func (u *IUT) NewEnv() compliance.NewEnv {
	return func(ctx context.Context) (compliance.Env, error) {
		select {
		case <-u.exited:
			return nil, fmt.Errorf("endpoint node (pid %d) is gone%s", u.proc.PID, u.logTail())
		default:
		}
		if err := u.wire.failed(); err != nil {
			return nil, err
		}
		u.wire.discard()
		return &env{u: u, ctx: ctx}, nil
	}
}
