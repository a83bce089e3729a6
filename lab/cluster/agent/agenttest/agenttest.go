//go:build linux

// Package agenttest is the harness of the tests of labs that span
// machines, on one machine: each "machine" is a network namespace with an
// address on an underlay — a bridge in a namespace of its own, MTU 9000 —
// where its agent runs (StartAgent), and a "client" namespace on the same
// underlay runs the rocelab commands that talk to the agents (Run). All of
// it is removed when the test ends.
package agenttest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/internal/labca"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// UnderlayMTU is the harness's underlay MTU: jumbo, as a RoCE lab's
// machines need (links.UnderlayMTU).
const UnderlayMTU = 9000

// Machine is one machine of the harness.
type Machine struct {
	// Name is the machine's name; NetNS its namespace; Dev its underlay
	// interface there; Addr its underlay address.
	Name, NetNS, Dev string
	Addr             netip.Addr
	// Root is a run-directory root of its own (its agent's).
	Root  string
	token string // the agents' token file
	caDir string // the lab CA (--tls-dir)
}

// Underlay is a harness: machines and a client on one underlay.
type Underlay struct {
	// NetNS holds the bridge.
	NetNS string
	// Machines, and the Client namespace that runs commands.
	Machines []Machine
	Client   Machine
	// TokenFile holds the agents' token: New puts it in the test's
	// environment (jsonapi.TokenEnv), which the commands inherit, and
	// StartAgent gives it to every agent.
	TokenFile string
	// CADir is the lab CA every agent serves TLS from (--tls-dir); New
	// puts its certificate in the environment (labca.EnvCA).
	CADir string
	id    string
}

// New makes an underlay with n machines and a client. Names start with
// "rltest-" and carry the test process's PID.
func New(t *testing.T, n int) *Underlay {
	t.Helper()
	u := &Underlay{id: fmt.Sprintf("%04x", os.Getpid()&0xffff), TokenFile: filepath.Join(t.TempDir(), "agent-token")}
	token := fmt.Sprintf("rltest-%x", time.Now().UnixNano())
	if err := os.WriteFile(u.TokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(jsonapi.TokenEnv, token)
	// The agents speak TLS with a lab CA, which the commands trust.
	u.CADir = filepath.Join(t.TempDir(), "lab-ca")
	if _, _, err := labca.LoadOrCreate(u.CADir); err != nil {
		t.Fatal(err)
	}
	t.Setenv(labca.EnvCA, filepath.Join(u.CADir, labca.CertFile))
	u.NetNS = u.newNS(t, "ul")
	h, err := netns.Handle(u.NetNS)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "ul", MTU: UnderlayMTU}}
	if err := h.LinkAdd(br); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetUp(br); err != nil {
		t.Fatal(err)
	}
	for i := range n + 1 {
		m := Machine{Name: fmt.Sprintf("m%d", i+1), Dev: "eth0", Addr: netip.AddrFrom4([4]byte{198, 18, 7, byte(i + 1)}), Root: runRoot(t)}
		if i == n {
			m.Name, m.Addr = "client", netip.AddrFrom4([4]byte{198, 18, 7, 200})
		}
		m.NetNS = u.newNS(t, m.Name)
		port := fmt.Sprintf("ul%s%d", u.id, i+1)
		if err := links.Create(links.Veth{A: links.End{NetNS: m.NetNS, Name: m.Dev}, B: links.End{NetNS: u.NetNS, Name: port}, MTU: UnderlayMTU}); err != nil {
			t.Fatal(err)
		}
		if err := enslave(h, port, br); err != nil {
			t.Fatal(err)
		}
		if err := address(m); err != nil {
			t.Fatal(err)
		}
		m.token, m.caDir = u.TokenFile, u.CADir
		if i == n {
			u.Client = m
		} else {
			u.Machines = append(u.Machines, m)
		}
	}
	return u
}

func (u *Underlay) newNS(t *testing.T, what string) string {
	t.Helper()
	return netnstest.New(t, "rltest-"+what+"-"+u.id)
}

func enslave(h *netlink.Handle, port string, br *netlink.Bridge) error {
	p, err := h.LinkByName(port)
	if err != nil {
		return err
	}
	return h.LinkSetMaster(p, br)
}

func address(m Machine) error {
	h, err := netns.Handle(m.NetNS)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(m.Dev)
	if err != nil {
		return err
	}
	a, err := netlink.ParseAddr(m.Addr.String() + "/24")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(l, a); err != nil {
		return err
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	return h.LinkSetUp(lo)
}

// runRoot is a run-directory root on tmpfs when it can be.
func runRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/run", "rltest-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	return dir
}

// Agent is an agent process the harness started.
type Agent struct {
	Addr string // host:port
	Proc proc.Process
	cmd  *exec.Cmd
	log  *bytes.Buffer
	// exited is closed once the process has been reaped: every thread
	// gone, its sockets closed.
	exited chan struct{}
}

// StartAgent starts `bin agent` (with extra flags) in m's namespace, waits
// until its address takes a TCP connection and stops it at the end of the
// test (SIGTERM, by PID). The connection is the new agent's only if no
// earlier agent of m still holds the address: stop or kill that one first
// (Stop, Kill return once it is gone).
func (m Machine) StartAgent(t *testing.T, bin string, extra ...string) *Agent {
	t.Helper()
	addr := net.JoinHostPort(m.Addr.String(), "7470")
	a := &Agent{Addr: addr, log: &bytes.Buffer{}, exited: make(chan struct{})}
	a.cmd = exec.Command(bin, append([]string{"agent", "--machine", m.Name, "--underlay", m.Addr.String(), "--underlay-dev", m.Dev, "--root", m.Root, "--token-file", m.token, "--tls-dir", m.caDir}, extra...)...)
	a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
	p, err := netns.Start(m.NetNS, a.cmd)
	if err != nil {
		t.Fatal(err)
	}
	a.Proc = p
	go func() { a.cmd.Wait(); close(a.exited) }()
	t.Cleanup(func() {
		a.Stop()
		if t.Failed() {
			t.Logf("agent %s:\n%s", m.Name, a.log.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var c net.Conn
		err := netns.Do(m.NetNS, func() (err error) { c, err = net.DialTimeout("tcp", addr, time.Second); return err })
		if err == nil {
			c.Close()
			return a
		}
		select {
		case <-a.exited:
			t.Fatalf("agent on %s exited: %s", m.Name, a.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent on %s does not listen on %s: %v", m.Name, addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the agent (SIGTERM, then SIGKILL after 5 s) and returns once
// it has exited.
func (a *Agent) Stop() {
	a.Proc.Stop(5 * time.Second)
	<-a.exited
}

// Kill kills the agent at once (SIGKILL), as a machine's engine would, and
// returns once it has exited. Not before: a killed process keeps its
// sockets until its last thread is gone, milliseconds after the signal
// (after /proc already shows it a zombie, which is all proc.Process.Stop
// waits for), and meanwhile its listener still completes connections, so
// the dial StartAgent waits for could reach the dying agent and let a
// test talk to an address that nothing serves yet.
func (a *Agent) Kill() {
	a.Proc.Signal(unix.SIGKILL)
	<-a.exited
}

// Run runs `bin args…` in the client namespace and returns its exit code
// and combined output; it fails the test if the command runs over
// timeout.
func (u *Underlay) Run(t *testing.T, timeout time.Duration, bin string, args ...string) (int, string) {
	t.Helper()
	// Not t.Context: cleanups run commands too, after it ended.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if _, err := netns.Start(u.Client.NetNS, cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%s %v ran over %v:\n%s", bin, args, timeout, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

// Agents is the --agents flag's value for agents.
func Agents(agents ...*Agent) string {
	s := ""
	for i, a := range agents {
		if i > 0 {
			s += ","
		}
		s += a.Addr
	}
	return s
}

// Command is a rocelab command the harness started in the client
// namespace and has not waited for yet (Start).
type Command struct {
	Proc proc.Process
	out  *bytes.Buffer
	done chan struct{}
	code int
}

// Start starts `bin args…` in the client namespace without waiting for
// it: a test signals it (Proc.Signal, as Ctrl-C would) and then Waits.
// It is killed, by PID, at the end of the test if it still runs.
func (u *Underlay) Start(t *testing.T, bin string, args ...string) *Command {
	t.Helper()
	c := &Command{out: &bytes.Buffer{}, done: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = c.out, c.out
	p, err := netns.Start(u.Client.NetNS, cmd)
	if err != nil {
		t.Fatal(err)
	}
	c.Proc = p
	go func() {
		err := cmd.Wait()
		c.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			c.code = ee.ExitCode()
		} else if err != nil {
			c.code = -1
		}
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			p.Signal(unix.SIGKILL)
			<-c.done
		}
	})
	return c
}

// Wait waits up to timeout for the command to end and returns its exit
// code and combined output; it fails the test if it runs on.
func (c *Command) Wait(t *testing.T, timeout time.Duration) (int, string) {
	t.Helper()
	select {
	case <-c.done:
		return c.code, c.out.String()
	case <-time.After(timeout):
		c.Proc.Signal(unix.SIGKILL)
		<-c.done
		t.Fatalf("command ran over %v:\n%s", timeout, c.out.String())
		return 0, ""
	}
}
