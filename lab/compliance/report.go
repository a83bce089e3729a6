package compliance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire/pcap"
)

// Result is one case's verdict.
type Result struct {
	Case      string         `json:"case"`
	Title     string         `json:"title"`
	Cites     []string       `json:"cites"`
	Level     string         `json:"level"` // the strongest keyword cited
	Mandatory bool           `json:"mandatory"`
	Verdict   string         `json:"verdict"` // pass, fail
	Detail    string         `json:"detail,omitempty"`
	Log       []string       `json:"log,omitempty"`
	Pcap      string         `json:"pcap,omitempty"`
	Fabric    clock.Duration `json:"fabric_ps"`
	Duration  time.Duration  `json:"wall_ns"`
	// Reruns is 1 for a case run again because its first run failed after
	// the IUT's retransmission timer fired (TimeoutCounter) where the case
	// does not expect it to (Case.Timeouts); the verdict and log are the
	// second run's, the log's first line says why.
	Reruns int `json:"reruns,omitempty"`
}

// Report is a run's results.
type Report struct {
	// Mode is the IUT mode the cases were selected for, as
	// endpoint.Mode names it (rocev2, metaroce).
	Mode    endpoint.Mode `json:"mode"`
	IUT     string        `json:"iut,omitempty"`
	Results []Result      `json:"results"`
	Wall    time.Duration `json:"wall_ns"`
}

// Failed returns the failed results.
func (r *Report) Failed() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Verdict == "fail" {
			out = append(out, x)
		}
	}
	return out
}

// OK reports whether every case citing a MUST passed.
func (r *Report) OK() bool {
	for _, x := range r.Results {
		if x.Verdict == "fail" && x.Mandatory {
			return false
		}
	}
	return true
}

// WriteTable prints one line per case and a summary.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tLEVEL\tCITES\tVERDICT\tDETAIL")
	for _, x := range r.Results {
		d := x.Detail
		if x.Pcap != "" {
			d += " [" + x.Pcap + "]"
		}
		switch {
		case x.Reruns > 0 && x.Verdict == "pass":
			d = "(on run 2: run 1 failed after the IUT's timer fired, see the log)"
		case x.Reruns > 0:
			d = strings.TrimSpace("(failed twice) " + d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", x.Case, x.Level, strings.Join(x.Cites, ","), x.Verdict, d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pass := len(r.Results) - len(r.Failed())
	_, err := fmt.Fprintf(w, "\n%d cases, %d passed, %d failed (mode %s, %v); every MUST passed: %v\n",
		len(r.Results), pass, len(r.Failed()), r.Mode, r.Wall.Round(time.Millisecond), r.OK())
	return err
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one testcase per case.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: "metaroce-compliance/" + r.Mode.String(), Tests: len(r.Results), Time: r.Wall.Seconds()}
	for _, x := range r.Results {
		jc := junitCase{Name: x.Case + " [" + strings.Join(x.Cites, ",") + "]", Classname: "compliance." + strings.SplitN(x.Case, "/", 2)[0],
			Time: x.Duration.Seconds(), SystemOut: strings.Join(x.Log, "\n")}
		if x.Verdict == "fail" {
			s.Failures++
			text := strings.Join(x.Log, "\n")
			if x.Pcap != "" {
				text += "\npcap: " + x.Pcap
			}
			jc.Failure = &junitFailure{Message: x.Detail, Type: x.Level, Text: text}
		}
		s.Cases = append(s.Cases, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writePcap writes a case's exchange, both directions, with the Env's
// clock as timestamps (fabric time from the Unix epoch).
func writePcap(name string, frames []Frame) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("pcap: %w", err)
	}
	w, err := pcap.NewWriter(f, 65535)
	if err != nil {
		f.Close()
		return fmt.Errorf("pcap %s: %w", name, err)
	}
	for _, fr := range frames {
		ts := time.Unix(0, int64(fr.At/clock.Time(clock.Nanosecond)))
		if err := w.WriteFrame(ts, fr.Data, len(fr.Data)); err != nil {
			f.Close()
			return fmt.Errorf("pcap %s: %w", name, err)
		}
	}
	return f.Close()
}
