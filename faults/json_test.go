package faults_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/faults"
)

// TestSpecJSONRoundTrip: every kind's spec survives the JSON form
// unchanged (same text, same kind, same params), without being re-parsed.
func TestSpecJSONRoundTrip(t *testing.T) {
	for _, text := range []string{
		"loss 1%",
		"loss 2% burst 4",
		"corrupt 0.1%",
		"duplicate 1%",
		"delay 50us jitter 5us",
		"reorder 1%",
		"rate 100G",
		"down",
		"flap period 1ms down 100us",
		"storm prio 3 interval 10us",
		"ecn-off",
		"pfc-off 3",
		"dscp-map 26:0",
		"elephant dst 10.0.0.1 rate 10G",
		"incast dst 10.0.0.1 burst 1MB period 100us",
		"loss 1% match dscp 26",
	} {
		t.Run(text, func(t *testing.T) {
			spec, err := faults.ParseSpec(text)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			var got faults.Spec
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if got.String() != spec.String() || got.Kind() != spec.Kind() || got.Match != spec.Match {
				t.Errorf("%s came back as %q (kind %s)", b, got, got.Kind())
			}
			if !strings.Contains(string(b), `"kind":"`+string(spec.Kind())+`"`) {
				t.Errorf("%s does not say its kind", b)
			}
		})
	}
}

func TestSpecJSONErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"kind":"loss","model":"gravity"}`, `unknown model "gravity"`},
		{`{"kind":"delay","model":"bernoulli","params":{"P":0.1}}`, `kind "delay" does not go with model "bernoulli"`},
		{`{"kind":"loss","model":"bernoulli","params":{"Q":0.1}}`, `unknown field "Q"`},
		{`{"kind":"loss","model":"bernoulli","params":{"P":"x"}}`, `params`},
		{`[1]`, `fault spec`},
	} {
		var s faults.Spec
		err := json.Unmarshal([]byte(c.in), &s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}
