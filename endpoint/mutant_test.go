package endpoint

import "testing"

func TestParseMutant(t *testing.T) {
	for _, m := range Mutants() {
		got, err := ParseMutant(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMutant(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	if _, err := ParseMutant("no-such-defect"); err == nil {
		t.Errorf("ParseMutant of an unknown name: no error")
	}
}
