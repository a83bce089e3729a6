package scenario

import (
	"encoding/xml"
	"fmt"
	"io"
)

// WriteJUnitInvalid writes the JUnit report of a scenario file that could
// not run because it does not validate (or cannot run as asked): one
// testsuite named suiteName with one testcase, "validate", in error with
// err's sentence, so that CI shows why there are no expectations.
func WriteJUnitInvalid(w io.Writer, suiteName, file string, err error) error {
	c := junitCase{
		Name: "validate " + file, Classname: suiteName, File: file, Time: "0.000",
		Error: &junitProblem{Message: err.Error(), Type: "validation", Text: err.Error()},
	}
	s := junitSuite{junitTotals: junitTotals{Name: suiteName, Tests: 1, Errors: 1, Time: "0.000"}, Cases: []junitCase{c}}
	doc := junitSuites{junitTotals: s.junitTotals, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}
