package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
)

func TestParseStat(t *testing.T) {
	// The command name contains ") " to trip naive parsers.
	line := "1234 (we) ird (x) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"
	st, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'S' || st.pgrp != 1234 || st.start != 987654 {
		t.Errorf("parseStat = %+v", st)
	}
	if _, err := parseStat([]byte("12 (x) S 1")); err == nil {
		t.Error("short line parsed")
	}
}

func TestStop(t *testing.T) {
	cmd := exec.Command(testenv.RequireTool(t, "sleep"), "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })

	p, err := Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("fresh process not alive")
	}
	// A wrong start time means "another process": never signalled.
	impostor := Process{PID: p.PID, StartTime: p.StartTime + 1}
	if impostor.Alive() {
		t.Error("impostor alive")
	}
	if err := impostor.Stop(time.Second); err != nil {
		t.Errorf("impostor Stop = %v", err)
	}
	if err := impostor.Signal(syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("impostor Signal = %v, want ErrGone", err)
	}
	select {
	case <-done:
		t.Fatal("impostor Stop killed the real process")
	case <-time.After(20 * time.Millisecond):
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	<-done
	if p.Alive() {
		t.Error("alive after Stop")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("second Stop = %v", err)
	}
	self, err := Lookup(os.Getpid())
	if err != nil || !self.Alive() {
		t.Errorf("Lookup(self) = %v, %v", self, err)
	}
}
