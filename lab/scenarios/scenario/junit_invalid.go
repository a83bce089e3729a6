package scenario

import "io"

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
	return writeSuite(w, s)
}
