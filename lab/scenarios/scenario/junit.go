package scenario

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The JUnit report follows the common schema CI systems read (Jenkins,
// GitLab, GitHub actions): testsuites > testsuite > testcase, with a
// failure (the expectation did not hold) or an error (it could not be
// evaluated) per failing case.

// junitTotals are the attributes a testsuite and the testsuites around
// it both carry: a name, the counts of its testcases and its time.
type junitTotals struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	junitTotals
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	junitTotals
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnitOptions add what the results do not know.
type JUnitOptions struct {
	// File is the scenario file, put on each testcase.
	File string
	// Elapsed is the run's wall time, the suite's time attribute.
	Elapsed time.Duration
	// Behind, if set, says the emulated lab fell behind its dilated clock:
	// no expectation's outcome is trustworthy, so every testcase is
	// skipped with this sentence — neither passed nor failed.
	Behind string
}

// WriteJUnit writes results as a JUnit XML report: one testsuite named
// suiteName with one testcase per expectation.
func WriteJUnit(w io.Writer, suiteName string, results []Result) error {
	return WriteJUnitWith(w, suiteName, results, JUnitOptions{})
}

// WriteJUnitWith is WriteJUnit with options.
func WriteJUnitWith(w io.Writer, suiteName string, results []Result, opts JUnitOptions) error {
	secs := strconv.FormatFloat(opts.Elapsed.Seconds(), 'f', 3, 64)
	s := junitSuite{junitTotals: junitTotals{Name: suiteName, Tests: len(results), Time: secs}}
	for _, r := range results {
		c := junitCase{
			Name: r.Expectation, Classname: suiteName, Time: "0.000",
			File: opts.File, Line: r.Pos.Line, SystemOut: r.Message,
		}
		switch {
		case opts.Behind != "":
			s.Skipped++
			c.Skipped = &junitProblem{Message: opts.Behind, Type: "behind", Text: r.Message}
		case r.Err != nil:
			s.Errors++
			c.Error = &junitProblem{
				Message: fmt.Sprintf("expectation %q could not be evaluated: %v", r.Expectation, r.Err),
				Type:    "evaluation", Text: r.Message,
			}
		case !r.Pass:
			s.Failures++
			c.Failure = &junitProblem{
				Message: fmt.Sprintf("expectation %q failed: %s", r.Expectation, r.Message),
				Type:    "expectation", Text: r.Message,
			}
		}
		s.Cases = append(s.Cases, c)
	}
	return writeSuite(w, s)
}

// writeSuite writes a JUnit document of one suite.
func writeSuite(w io.Writer, s junitSuite) error {
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
