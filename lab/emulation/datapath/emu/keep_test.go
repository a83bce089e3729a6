package emu_test

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/wire"
)

// keeper is a model that keeps every packet it receives, as an
// endpoint's NIC may keep the bytes it was handed.
type keeper struct{ got []*wire.Packet }

func (k *keeper) Receive(p *wire.Packet) { k.got = append(k.got, p) }

// TestKeepPortReadsIntoOwnBuffers: a Keep port (an endpoint's) hands the
// model each frame in a buffer of the frame's own length, and frames read
// in later batches do not overwrite those delivered before (the port
// reads into buffers it reuses, then copies).
func TestKeepPortReadsIntoOwnBuffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := emu.NewMemWaiter()
		mp := w.NewPort()
		l, err := emu.New(emu.Options{Name: "ep", Scale: 1000, Ports: []emu.Port{{Name: "p0", IO: mp, Keep: true}}, Waiter: w})
		if err != nil {
			t.Fatal(err)
		}
		k := &keeper{}
		l.Connect(0, k)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		var sent [][]byte
		for batch := range 3 {
			for i := range 4 {
				f := frame(t, 0, 1, 26, 64+100*i+batch, uint32(4*batch+i))
				sent = append(sent, f)
				mp.Inject(f)
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		var got []*wire.Packet
		l.Do(ctx, func() { got = append(got, k.got...) })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(got) != len(sent) {
			t.Fatalf("model got %d frames, want %d", len(got), len(sent))
		}
		for i, p := range got {
			if !bytes.Equal(p.Raw[:p.Len], sent[i]) {
				t.Errorf("frame %d: the model holds other bytes than were sent (a later read overwrote them?)", i)
			}
			if cap(p.Raw) != len(sent[i]) {
				t.Errorf("frame %d of %d bytes delivered in a buffer of %d", i, len(sent[i]), cap(p.Raw))
			}
		}
	})
}

// giver is a model that gives back the bytes of every frame it receives
// (as an endpoint's NIC does through endpoint.Options.ReturnRx), noting
// which buffer each came in and whether it held the bytes sent.
type giver struct {
	back    func(*wire.Packet)
	buffers map[*byte]bool
	frames  [][]byte
}

func (g *giver) Receive(p *wire.Packet) {
	g.buffers[&p.Raw[:1][0]] = true
	g.frames = append(g.frames, bytes.Clone(p.Raw[:p.Len]))
	g.back(p)
}

// TestTakeBackReusesBuffers: a Keep port whose model gives its bytes back
// (Loop.TakeBack) hands it frames in the loop's receive buffers, uncopied,
// and reads later frames into the buffers given back: 200 frames come in
// no more buffers than one read's batch and the last read's frames.
func TestTakeBackReusesBuffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := emu.NewMemWaiter()
		mp := w.NewPort()
		const batch = 16
		l, err := emu.New(emu.Options{Name: "ep", Scale: 1000, ReadBatch: batch, Ports: []emu.Port{{Name: "p0", IO: mp, Keep: true}}, Waiter: w})
		if err != nil {
			t.Fatal(err)
		}
		g := &giver{back: l.TakeBack(0), buffers: map[*byte]bool{}}
		l.Connect(0, g)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		var sent [][]byte
		for b := range 50 {
			for i := range 4 {
				f := frame(t, 0, 1, 26, 64+100*i+b, uint32(4*b+i))
				sent = append(sent, f)
				mp.Inject(f)
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		var frames [][]byte
		var buffers int
		l.Do(ctx, func() { frames, buffers = g.frames, len(g.buffers) })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(frames) != len(sent) {
			t.Fatalf("model got %d frames, want %d", len(frames), len(sent))
		}
		for i := range frames {
			if !bytes.Equal(frames[i], sent[i]) {
				t.Errorf("frame %d: the model got other bytes than were sent", i)
			}
		}
		if buffers > batch+4 {
			t.Errorf("%d frames came in %d buffers, want at most %d: the buffers given back are not reused", len(sent), buffers, batch+4)
		}
	})
}
