package topologies

import "testing"

// TestEndpointsLinks: a link written as containerlab writes it
// (endpoints: [a, b]) is the link "a -- b", with its options.
func TestEndpointsLinks(t *testing.T) {
	const head = `name: t
nodes:
  h1: {kind: host, frontend: false}
  s1: {kind: switch, role: rtsw}
links:
`
	a, err := Parse("a.yaml", []byte(head+"  - {endpoints: [\"h1:gpu0\", \"s1:p1\"], rate: 100G}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("b.yaml", []byte(head+"  - {link: h1:gpu0 -- s1:p1, rate: 100G}\n"))
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Node("s1").Port("p1"), b.Node("s1").Port("p1")
	if pa == nil || pb == nil || pa.PeerNode != "h1" || pa.Rate != pb.Rate || pa.PeerPort != pb.PeerPort {
		t.Errorf("endpoints link %+v, link form %+v", pa, pb)
	}
}
