package agenttest_test

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// fakeEnv makes this test binary, started by StartAgent as `bin agent …`,
// play the agent (fakeAgent).
const fakeEnv = "ROCELAB_AGENTTEST_FAKE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" && len(os.Args) > 1 && os.Args[1] == "agent" {
		fakeAgent(os.Args[2:])
		return
	}
	os.Exit(m.Run())
}

// fakeAgent stands in for `rocelab agent`: it listens where StartAgent
// dials (the --underlay address, port 7470) and keeps its threads busy, as
// an agent at work does, which makes its death after a signal take a
// moment.
func fakeAgent(args []string) {
	i := slices.Index(args, "--underlay")
	if i < 0 || i+1 == len(args) {
		fmt.Fprintln(os.Stderr, "fake agent: no --underlay")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(args[i+1], "7470"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		os.Exit(1)
	}
	defer ln.Close()
	for range 4 * runtime.GOMAXPROCS(0) {
		go func() {
			for {
			}
		}()
	}
	select {}
}

// TestAgentGoneWhenEnded: once Kill or Stop returns, the agent's address
// takes no connection. A killed process keeps its sockets for a moment
// after the signal, its listener completing connections meanwhile; an
// end that returned then let StartAgent's dial reach the dying agent, and
// a test talk to an address nothing served yet (TestLabOnKubernetes: the
// inspect after m2's agent came back found "connection refused").
func TestAgentGoneWhenEnded(t *testing.T) {
	testenv.RequireRoot(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeEnv, "1")
	m := agenttest.New(t, 1).Machines[0]
	dial := func(addr string) error {
		return netns.Do(m.NetNS, func() error {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		})
	}
	for _, tc := range []struct {
		name string
		end  func(*agenttest.Agent)
	}{
		{"Kill", (*agenttest.Agent).Kill},
		{"Stop", (*agenttest.Agent).Stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 10 {
				a := m.StartAgent(t, bin)
				tc.end(a)
				if err := dial(a.Addr); err == nil {
					t.Fatalf("%s returned while the agent's address still took connections", tc.name)
				}
			}
		})
	}
}
