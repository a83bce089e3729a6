package verbs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
)

// Loop runs functions on the goroutine that owns the endpoint models
// (*emu.Loop).
type Loop interface {
	// Do runs f there and waits.
	Do(ctx context.Context, f func()) error
	// Post queues f there without waiting; false once the loop stopped.
	Post(f func()) bool
}

// NIC is one NIC the server offers as a device.
type NIC struct {
	NIC *endpoint.NIC
	// Name is the lab's name of the NIC ("host1:gpu0"); the device is
	// named rocelab_gpu0 (DeviceNames).
	Name string
	MAC  [6]byte
	MTU  int // RDMA payload per packet
}

// Options configure a Server.
type Options struct {
	NICs  []NIC
	Loop  Loop
	Scale int // the scale factor k, reported to programs
	// MaxQPs bounds the QPs on one NIC; Used (may be nil) counts the QPs
	// the node holds on a NIC besides the server's (loop goroutine).
	MaxQPs int
	Used   func(nic int) int
	// CC is the congestion control of a QP whose program names none.
	CC  string
	Log *slog.Logger
	// HostName is the host the node is; Hosts every host of the lab, for
	// rdma_cm's address resolution (empty: a NIC address resolves to
	// itself, nothing else resolves).
	HostName string
	Hosts    []Host
	// CMTimeout is the NICs' CM response timeout in fabric time
	// (DefaultCMTimeout when 0).
	CMTimeout clock.Duration
}

// Server serves the verbs of a node's NICs on a Unix socket.
type Server struct {
	opts Options
	// qps counts the live verbs QPs per NIC (loop goroutine).
	qps []int
	cm  cmState

	mu    sync.Mutex
	conns map[*conn]bool
	wg    sync.WaitGroup
}

// New returns a Server over opts.NICs.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.CC == "" {
		opts.CC = "none"
	}
	if opts.CMTimeout <= 0 {
		opts.CMTimeout = DefaultCMTimeout
	}
	s := &Server{opts: opts, qps: make([]int, len(opts.NICs)), conns: map[*conn]bool{}}
	s.cmInit()
	return s
}

// MaxDeviceName is the longest device name the lab gives: UCX keeps a
// memory domain's name (the device's) in 16 bytes, NUL included, and finds
// no device whose name it had to cut.
const MaxDeviceName = 15

// DeviceName is the verbs device name of a host's NIC port ("gpu0" →
// "rocelab_gpu0"): a program sees its own host's NICs only, so the port's
// name is enough, and the same program line works on every host, as
// "mlx5_0" does on a real cluster's. A name that would pass MaxDeviceName
// is "rl_" + the port's name, cut to fit ("rl_frontend-nic" …); DeviceNames
// keeps cut names apart.
func DeviceName(port string) string {
	b := portPart(port)
	if n := "rocelab_" + b; len(n) <= MaxDeviceName {
		return n
	}
	return cut("rl_" + b)
}

// DeviceNames names the devices of one host's NICs (lab names,
// "host1:gpu0", or port names), in order: DeviceName of each, and where
// two would be the same (ports whose names were cut alike), "rl<index>_"
// and as much of the port's name as fits.
func DeviceNames(nics []string) []string {
	names := make([]string, len(nics))
	seen := map[string]int{}
	for i, n := range nics {
		names[i] = DeviceName(n)
		seen[names[i]]++
	}
	for i, n := range nics {
		if seen[names[i]] > 1 {
			names[i] = cut(fmt.Sprintf("rl%d_%s", i, portPart(n)))
		}
	}
	return names
}

// portPart is the port of a lab NIC name ("host1:gpu0" → "gpu0"), with
// what a device name may not hold made '_'.
func portPart(nic string) string {
	if _, p, ok := strings.Cut(nic, ":"); ok {
		nic = p
	}
	b := []byte(nic)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

func cut(name string) string { return name[:min(len(name), MaxDeviceName)] }

// QPs returns how many verbs QPs NIC i holds (loop goroutine).
func (s *Server) QPs(i int) int {
	if i < 0 || i >= len(s.qps) {
		return 0
	}
	return s.qps[i]
}

// Listen opens the verbs socket at path (root only, like the node's API
// socket), replacing a stale socket file.
func Listen(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("verbs socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("verbs socket: %w", err)
	}
	return ln, nil
}

// Serve accepts programs on ln until ctx ends, then closes every
// connection (freeing what it holds) and returns.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			s.closeAll()
			s.wg.Wait()
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("verbs: accept: %w", err)
		}
		cn := newConn(s, c)
		s.mu.Lock()
		s.conns[cn] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			cn.serve(ctx)
			s.mu.Lock()
			delete(s.conns, cn)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.uc.Close()
	}
}

// devices lists the NICs as struct rl_device.
func (s *Server) devices() []byte {
	var b []byte
	var nics []string
	for _, n := range s.opts.NICs {
		nics = append(nics, n.Name)
	}
	names := DeviceNames(nics)
	for i, n := range s.opts.NICs {
		d := device{Name: names[i], NIC: n.Name, MAC: n.MAC, MTU: uint32(n.MTU),
			RateBps: uint64(n.NIC.LineRate()), Scale: uint32(max(s.opts.Scale, 1)), MaxQP: uint32(s.opts.MaxQPs)}
		if ip := n.NIC.IP(); ip.Is4() {
			d.IPv4 = ip.As4()
		}
		b = d.append(b)
	}
	return b
}

// verbsError is a failed request: an errno for the program and words for
// people.
type verbsError struct {
	errno int32
	msg   string
}

func (e *verbsError) Error() string { return e.msg }

func fail(errno int32, format string, args ...any) error {
	return &verbsError{errno: errno, msg: fmt.Sprintf(format, args...)}
}

// Errno values the library returns to programs.
const (
	eINVAL     = 22
	eNOMEM     = 12
	eNODEV     = 19
	eOPNOTSUPP = 95
	eBUSY      = 16
	ePROTO     = 71
)

// trimNUL returns the C string in b.
func trimNUL(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Dir is a lab's verbs directory under its run directory: the endpoint
// nodes' verbs sockets and, in lib/, rocelab's libibverbs.so.1 (deploy
// copies it there). A directory of its own, so that a container can be
// given it alone.
func Dir(runDir string) string { return filepath.Join(runDir, "verbs") }

// SocketPath is where the endpoint node whose API socket is apiSocket (in
// its lab's run directory) serves verbs: <run dir>/verbs/<node>.sock.
func SocketPath(apiSocket string) string {
	base := strings.TrimSuffix(filepath.Base(apiSocket), ".sock")
	return filepath.Join(Dir(filepath.Dir(apiSocket)), base+".sock")
}

// LibDir is the directory that holds rocelab's libibverbs.so.1 for the
// programs of the lab whose run directory holds apiSocket.
func LibDir(apiSocket string) string { return filepath.Join(Dir(filepath.Dir(apiSocket)), "lib") }

// LibName is the library's file name (its soname), CMLibName its
// librdmacm's (rdma_cm over the same socket), built beside it.
const (
	LibName   = "libibverbs.so.1"
	CMLibName = "librdmacm.so.1"
)
