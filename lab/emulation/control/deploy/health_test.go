package deploy

import "testing"

func TestProblemString(t *testing.T) {
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{Node: "rtsw1", What: "dead", Detail: "process gone"},
			"node rtsw1 is dead (process gone): rocelab restart rtsw1 brings it back"},
		{Problem{Node: "rtsw1", What: "down", Fault: "rtsw1/f2", Detail: "fault rtsw1/f2 down on rtsw1:p5"},
			"rtsw1: fault rtsw1/f2 down on rtsw1:p5 (rocelab fault clear rtsw1/f2 removes it)"},
		// A detail of any shape: the fault ID is not parsed out of it.
		{Problem{Node: "h1", What: "down", Fault: "h1/f1", Detail: "held down"},
			"h1: held down (rocelab fault clear h1/f1 removes it)"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.p, got, c.want)
		}
	}
}
