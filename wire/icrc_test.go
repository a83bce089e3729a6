package wire

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestSlicing8Update(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		seed := rng.Uint32()
		if got, want := slicing8Update(seed, b), crc32.Update(seed, crc32.IEEETable, b); got != want {
			t.Fatalf("%d bytes: slicing8Update %08x, crc32.Update %08x", n, got, want)
		}
	}
}
