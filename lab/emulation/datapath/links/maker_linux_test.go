package links_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// sysctl reads a file under /proc/sys from inside namespace ns.
func sysctl(t *testing.T, ns, path string) string {
	t.Helper()
	var v string
	err := netns.Do(ns, func() error {
		b, err := os.ReadFile("/proc/sys/" + path)
		v = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMaker makes a star of pairs from a hub namespace to three others
// in parallel, one end keeping IPv6, and checks every end (up, alias,
// offloads off, IPv6 as asked) and that the namespaces' IPv6 defaults are
// back as they were.
func TestMaker(t *testing.T) {
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		testenv.Missing(t, "IPv6 in the kernel")
	}
	hub := netnstest.NewUnique(t, "")
	leaves := []string{netnstest.NewUnique(t, ""), netnstest.NewUnique(t, ""), netnstest.NewUnique(t, "")}
	before := sysctl(t, hub, "net/ipv6/conf/default/disable_ipv6")
	id := netnstest.Unique("")
	var vs []links.Veth
	for i, ns := range leaves {
		for j := range 2 {
			vs = append(vs, links.Veth{
				A: links.End{NetNS: hub, Name: fmt.Sprintf("rlh%s%d%d", id, i, j), Alias: fmt.Sprintf("rocelab:t:hub:p%d%d", i, j), NoIPv6: true},
				// The first pair's leaf end keeps IPv6.
				B: links.End{NetNS: ns, Name: fmt.Sprintf("rll%s%d", id, j), Alias: fmt.Sprintf("rocelab:t:l%d:p%d", i, j), NoIPv6: i+j > 0},
			})
		}
	}
	m := &links.Maker{OwnNamespaces: true}
	var wg sync.WaitGroup
	errs := make([]error, len(vs))
	for i, v := range vs {
		wg.Go(func() { errs[i] = m.Create(v) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := m.WaitUp(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		for i, e := range []links.End{v.A, v.B} {
			h, err := netns.Handle(e.NetNS)
			if err != nil {
				t.Fatal(err)
			}
			l, err := h.LinkByName(e.Name)
			h.Close()
			if err != nil {
				t.Fatalf("%s/%s: %v", e.NetNS, e.Name, err)
			}
			// A is operationally up; B has its carrier (WaitUp's doc).
			a := l.Attrs()
			up := a.OperState == netlink.OperUp || i == 1 && a.RawFlags&unix.IFF_LOWER_UP != 0
			if a.Alias != e.Alias || !up || a.MTU != links.DefaultMTU {
				t.Errorf("%s: alias %q operstate %v flags %#x mtu %d", e.Name, a.Alias, a.OperState, a.RawFlags, a.MTU)
			}
			f, err := links.Features(e.NetNS, e.Name)
			if err != nil {
				t.Fatal(err)
			}
			if f["tx-checksum-ip-generic"] || f["rx-gro"] || f["tx-generic-segmentation"] {
				t.Errorf("%s: offloads on", e.Name)
			}
			want := "0"
			if e.NoIPv6 {
				want = "1"
			}
			if got := sysctl(t, e.NetNS, "net/ipv6/conf/"+e.Name+"/disable_ipv6"); got != want {
				t.Errorf("%s/%s: disable_ipv6 %s, want %s", e.NetNS, e.Name, got, want)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range append(leaves, hub) {
		if got := sysctl(t, ns, "net/ipv6/conf/default/disable_ipv6"); got != before {
			t.Errorf("%s: default disable_ipv6 %s after Close, was %s", ns, got, before)
		}
	}
	// A failed Create (the name is taken) leaves nothing of its pair.
	m = &links.Maker{OwnNamespaces: true}
	defer m.Close()
	dup := links.Veth{A: links.End{NetNS: leaves[0], Name: "rlx" + id}, B: links.End{NetNS: hub, Name: vs[0].A.Name}}
	if err := m.Create(dup); err == nil {
		t.Fatal("a pair with a taken name was made")
	}
	h, _ := netns.Handle(leaves[0])
	defer h.Close()
	if _, err := h.LinkByName(dup.A.Name); err == nil {
		t.Error("the failed pair's end is left")
	}
}
