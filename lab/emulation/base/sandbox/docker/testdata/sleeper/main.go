// Command sleeper stands in for the rocelab binary in the docker runtime's
// tests: built static and put into a node image at /rocelab.
//
//	sleeper serve DIR NAME  write the interface names to DIR/NAME.ifaces
//	                        (again on SIGHUP), exit 0 on SIGTERM
//	sleeper ifaces          print the interface names, exit 3
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func ifaces() string {
	list, err := net.Interfaces()
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, i := range list {
		b.WriteString(i.Name + "\n")
	}
	return b.String()
}

func write(dir, name string) {
	p := filepath.Join(dir, name+".ifaces")
	if err := os.WriteFile(p+".tmp", []byte(ifaces()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	switch {
	case len(os.Args) == 4 && os.Args[1] == "serve":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
		write(os.Args[2], os.Args[3])
		fmt.Println("serving")
		for s := range sig {
			if s == syscall.SIGTERM {
				return
			}
			write(os.Args[2], os.Args[3])
		}
	case len(os.Args) == 2 && os.Args[1] == "ifaces":
		fmt.Print(ifaces())
		os.Exit(3)
	default:
		fmt.Fprintln(os.Stderr, "usage: sleeper serve DIR NAME | sleeper ifaces")
		os.Exit(2)
	}
}
