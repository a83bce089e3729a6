package faults

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A Spec travels between processes (the CLI or a scenario run and a lab's
// node) as a typed JSON value, so it is parsed once, where a person typed
// it, and never again:
//
//	{"kind": "loss", "model": "bernoulli", "params": {"P": 0.01}, "text": "loss 1%"}
//
// model names the Params type (a kind can have several: loss is
// bernoulli or gilbert-elliott), params holds its fields, match (when
// present) the Match, and text the text syntax for people reading the
// JSON (ignored when decoding). Decoding checks that kind agrees with the
// model; values are checked where they are used (Params.New), as for a
// Spec built in Go.

// paramModel is one Params type's JSON name and decoder.
type paramModel struct {
	name   string
	is     func(Params) bool
	decode func(json.RawMessage) (Params, error)
}

// model returns the paramModel of the Params type T.
func model[T Params](name string) paramModel {
	return paramModel{
		name: name,
		is:   func(p Params) bool { _, ok := p.(T); return ok },
		decode: func(raw json.RawMessage) (Params, error) {
			var v T
			if len(raw) == 0 {
				return v, nil
			}
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			err := dec.Decode(&v)
			return v, err
		},
	}
}

// paramModels lists every Params type a Spec may hold.
var paramModels = []paramModel{
	model[BernoulliLoss]("bernoulli"),
	model[GilbertElliott]("gilbert-elliott"),
	model[Corruption]("corruption"),
	model[Duplication]("duplication"),
	model[Delay]("delay"),
	model[RateLimit]("rate"),
	model[Flap]("flap"),
	model[PFCStorm]("storm"),
	model[ECNOff]("ecn-off"),
	model[PFCOff]("pfc-off"),
	model[DSCPMap]("dscp-map"),
	model[Traffic]("traffic"),
}

type specJSON struct {
	Kind   Kind            `json:"kind"`
	Model  string          `json:"model"`
	Params json.RawMessage `json:"params,omitempty"`
	Match  *Match          `json:"match,omitempty"`
	Text   string          `json:"text,omitempty"`
}

// MarshalJSON writes s as its typed JSON form.
func (s Spec) MarshalJSON() ([]byte, error) {
	if s.Params == nil {
		return []byte("null"), nil
	}
	var name string
	for _, m := range paramModels {
		if m.is(s.Params) {
			name = m.name
			break
		}
	}
	if name == "" {
		return nil, fmt.Errorf("fault spec: params of type %T have no JSON form", s.Params)
	}
	params, err := json.Marshal(s.Params)
	if err != nil {
		return nil, fmt.Errorf("fault spec %s: %w", s, err)
	}
	out := specJSON{Kind: s.Kind(), Model: name, Params: params, Text: s.String()}
	if !s.Match.IsZero() {
		m := s.Match
		out.Match = &m
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the typed JSON form.
func (s *Spec) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = Spec{}
		return nil
	}
	var in specJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("fault spec: %w", err)
	}
	for _, m := range paramModels {
		if m.name != in.Model {
			continue
		}
		p, err := m.decode(in.Params)
		if err != nil {
			return fmt.Errorf("fault spec (%s): params: %w", in.Model, err)
		}
		if in.Kind != "" && p.Kind() != in.Kind {
			return fmt.Errorf("fault spec: kind %q does not go with model %q (its kind is %s)", in.Kind, in.Model, p.Kind())
		}
		*s = Spec{Params: p}
		if in.Match != nil {
			s.Match = *in.Match
		}
		return nil
	}
	var names []string
	for _, m := range paramModels {
		names = append(names, m.name)
	}
	return fmt.Errorf("fault spec: unknown model %q (want one of %s)", in.Model, strings.Join(names, ", "))
}
