package topologies

import (
	"bytes"
	"fmt"
	"testing"
)

// genFile writes the explicit file a generator gives, as `topo gen`
// does: what `rocelab validate` reads for big fabrics.
func genFile(tb testing.TB, hosts, gpus, rtsw, ctsw int) []byte {
	tb.Helper()
	over := Ratio(2)
	g := &GenerateSpec{Hosts: &hosts, GPUs: &gpus, RTSW: &rtsw, CTSW: &ctsw, Oversubscription: &over}
	nodes, links, err := Generate(g)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteExplicit(&buf, "big", "", nil, nodes, links); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkParseGenerated parses and validates generated Clos zones of
// growing size: the time per NIC must stay flat (near-linear validation).
func BenchmarkParseGenerated(b *testing.B) {
	for _, sz := range []struct{ hosts, gpus, rtsw, ctsw int }{
		{256, 8, 32, 16}, {1024, 8, 128, 64}, {2048, 4, 128, 32},
	} {
		data := genFile(b, sz.hosts, sz.gpus, sz.rtsw, sz.ctsw)
		b.Run(fmt.Sprintf("hosts=%d,gpus=%d", sz.hosts, sz.gpus), func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse("big.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sz.hosts*sz.gpus), "ns/nic")
		})
	}
}
