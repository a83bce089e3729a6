package hostfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs/hostfs"
)

// TestEnter: a program started after Enter sees the devices' character
// nodes and sysfs files, its namespace's own net devices, and the
// machine's /dev as before; the machine itself gains nothing.
func TestEnter(t *testing.T) {
	ns := netnstest.New(t, fmt.Sprintf("rltest-hostfs-%d", os.Getpid()))
	_, devBefore := os.Stat("/dev/infiniband")
	_, sysBefore := os.Stat("/sys/class/infiniband")
	devs := []hostfs.Device{
		{Name: "rocelab_gpu0", Index: 0, Netdev: "lo", GUID: [8]byte{0, 0xa3, 0xb1, 0xff, 0xfe, 0, 1, 1}, RateBps: 400e9,
			GIDs: []hostfs.GID{{Raw: [16]byte{0xfe, 0x80}}, {Raw: [16]byte{0xfe, 0x80}, V2: true}}},
		{Name: "rocelab_gpu1", Index: 1, Netdev: "lo", RateBps: 200e9},
	}
	script := strings.Join([]string{
		"stat -c '%F %t:%T %a' /dev/infiniband/uverbs0 /dev/infiniband/uverbs1",
		"cat /sys/class/infiniband/rocelab_gpu0/ports/1/gid_attrs/types/1",
		"cat /sys/class/infiniband/rocelab_gpu0/ports/1/gid_attrs/ndevs/0",
		"cat /sys/class/infiniband/rocelab_gpu0/ports/1/gids/1",
		"cat /sys/class/infiniband/rocelab_gpu0/node_guid",
		"cat /sys/class/infiniband/rocelab_gpu1/ports/1/rate",
		"cat /sys/class/infiniband_verbs/uverbs1/ibdev",
		"ls /sys/class/net",
		"echo written > /dev/null && echo /dev/null works",
		"test -e /dev/pts/ptmx && echo /dev/pts is there",
		"getent hosts host4",
		"ls -a /dev | grep -c rocelab-hosts",
	}, "; ")
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	hostsBefore, _ := os.ReadFile("/etc/hosts")
	names := []hostfs.HostName{{Name: "host4", Addr: netip.MustParseAddr("198.19.0.7")}}
	if _, err := netns.StartPrepared(ns, cmd, func() error { return hostfs.Enter(devs, names...) }); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // grep -c's count of 0 exits 1
	want := strings.Join([]string{
		"character special file e7:c0 666", // 231:192
		"character special file e7:c1 666",
		"RoCE v2",
		"lo",
		"fe80:0000:0000:0000:0000:0000:0000:0000",
		"00a3:b1ff:fe00:0101",
		"200 Gb/sec (4X HDR)",
		"rocelab_gpu1",
		"lo", // the namespace's own net devices, not the machine's
		"/dev/null works",
		"/dev/pts is there",
		"198.19.0.7      host4", // the lab's hosts by name
		"0",                     // and nothing left in /dev for it
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("in the program's view:\n%s\nwant:\n%s", out.String(), want)
	}
	// Entered again from inside the view (a launcher that runs rocelab
	// exec under rocelab exec): the lab's entries are made anew.
	out.Reset()
	cmd = exec.Command("sh", "-c", "ls /dev/infiniband; cat /sys/class/infiniband_verbs/uverbs0/ibdev; grep -c host4 /etc/hosts")
	cmd.Stdout, cmd.Stderr = &out, &out
	twice := func() error {
		if err := hostfs.Enter(devs[:1], names...); err != nil {
			return err
		}
		return hostfs.Enter(devs[:1], names...)
	}
	if _, err := netns.StartPrepared(ns, cmd, twice); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || out.String() != "uverbs0\nrocelab_gpu0\n1\n" {
		t.Errorf("entered twice: %v\n%s", err, out.String())
	}

	// The machine is as it was.
	if after, _ := os.ReadFile("/etc/hosts"); !bytes.Equal(after, hostsBefore) {
		t.Errorf("the machine's /etc/hosts changed:\n%s", after)
	}
	if _, err := os.Stat("/dev/infiniband"); errors.Is(devBefore, os.ErrNotExist) && err == nil {
		t.Error("/dev/infiniband appeared on the machine")
	}
	if _, err := os.Stat("/sys/class/infiniband"); errors.Is(sysBefore, os.ErrNotExist) && err == nil {
		t.Error("/sys/class/infiniband appeared on the machine")
	}
}
