// Package scenarios groups the front end that drives either clock: the
// scenario language (scenario), the runs that play a scenario on the
// emulation or the simulation (run), the reports they write (report), and
// the fidelity check that runs one file in both clocks and compares
// (fidelity).
package scenarios
