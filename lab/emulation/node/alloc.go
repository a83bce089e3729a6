package node

import (
	"os"

	"github.com/rocelab/rocelab/internal/hugepage"
)

// allocBuffer returns n zero bytes whose pages are already in memory.
// A large make takes fresh pages from the kernel without touching them,
// so the first write to each page faults; a NIC writing received data
// into a new region would take those faults on the node's loop, one per
// 4 KB frame (about 20–40 µs each on the VM this was measured on; in a
// page-fault profile of the laptop probe, the NICs' writes into
// collective regions were a sixth of the endpoints' faults). Writing one
// byte per page here, on the API's goroutine, takes them before the loop
// sees the buffer; and a buffer that holds whole 2 MiB pages is advised
// onto huge pages first (hugepage.AdviseBytes), so that a 4 MiB region
// takes 2 faults instead of 1,024 (where the kernel has no transparent
// huge pages it takes them all, as before).
func allocBuffer(n int) []byte {
	b := make([]byte, n)
	hugepage.AdviseBytes(b)
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 0
	}
	return b
}
