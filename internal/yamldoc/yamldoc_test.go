package yamldoc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *Error // nil: parses
		top      string // KindName of the top node when it parses
	}{
		{name: "mapping", in: "a: 1\nb: [1, 2]\n", top: "a mapping"},
		{name: "one document marker", in: "---\na: 1\n", top: "a mapping"},
		{name: "empty", in: "", want: &Error{1, 1, "empty topology file"}},
		{name: "only a comment", in: "# nothing\n", want: &Error{1, 1, "empty topology file"}},
		{name: "second document", in: "a: 1\n---\nb: 2\n", want: &Error{Line: 3, Col: 1,
			Msg: "a second YAML document: a topology file holds one (remove the '---' and what follows, or split the file)"}},
		{name: "unclosed flow", in: "a: [1, 2\nb: 3\n", want: &Error{Line: 2, Col: 1, Msg: "YAML syntax: did not find expected ',' or ']'"}},
		{name: "tab indent", in: "a:\n\tb: 1\n", want: &Error{Line: 2, Col: 1, Msg: "YAML syntax: found character that cannot start any token"}},
		{name: "alias top", in: "&x a: 1\n", top: "a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Parse([]byte(tc.in), "topology")
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, err); diff != "" {
					t.Fatalf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if got := KindName(n); got != tc.top {
				t.Errorf("top node is %s, want %s", got, tc.top)
			}
		})
	}
}
