package collective

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Op is a collective operation.
type Op uint8

// Collective operations.
const (
	AllReduce Op = iota + 1
	AllGather
	ReduceScatter
	AllToAll
)

var opNames = map[Op]string{
	AllReduce:     "all_reduce",
	AllGather:     "all_gather",
	ReduceScatter: "reduce_scatter",
	AllToAll:      "alltoall",
}

// String returns the nccl-tests name of o (all_reduce, all_gather, …).
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ParseOp accepts the nccl-tests names and a few spellings of each
// (allreduce, all-reduce, all_reduce).
func ParseOp(s string) (Op, error) {
	norm := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == '_' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		norm = append(norm, c)
	}
	switch string(norm) {
	case "allreduce":
		return AllReduce, nil
	case "allgather":
		return AllGather, nil
	case "reducescatter":
		return ReduceScatter, nil
	case "alltoall", "a2a":
		return AllToAll, nil
	}
	return 0, fmt.Errorf("unknown collective %q (want allreduce, allgather, reducescatter or alltoall)", s)
}

// reduces reports whether o sums values (and so has a redop).
func (o Op) reduces() bool { return o == AllReduce || o == ReduceScatter }

// busFactor is nccl-tests' correction from algbw to busbw for o on n ranks
// (doc/PERFORMANCE.md, "Summary").
func (o Op) busFactor(n int) float64 {
	f := float64(n-1) / float64(n)
	if o == AllReduce {
		return 2 * f
	}
	return f
}

// DataType is the element type of a collective. Both types are 4 bytes.
type DataType uint8

// Element types.
const (
	Float32 DataType = iota
	Int32
)

// String returns the nccl-tests name: float or int32.
func (d DataType) String() string {
	if d == Int32 {
		return "int32"
	}
	return "float"
}

// elemSize is the size of one element in bytes.
const elemSize = 4

// fillRange is the half-width of the fill values: each element is an
// integer in [-fillRange, fillRange]. Sums of up to 2^24/fillRange ranks
// are exact in float32, so the check compares for equality.
const fillRange = 8

// fill returns the initial value of element idx of rank's input in
// iteration iter: a counter-based generator (SplitMix64 of the seed and the
// coordinates), so the expected result can be computed without keeping the
// inputs, and each iteration's data differs (a stale buffer is caught).
func fill(seed uint64, iter, rank int, idx int64) int32 {
	x := seed ^ uint64(iter)*0x9e3779b97f4a7c15 ^ uint64(rank)*0xc2b2ae3d27d4eb4f ^ uint64(idx)*0x165667b19e3779f9
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return int32(((x>>32)*(2*fillRange+1))>>32) - fillRange // top bits scaled to [0, 17)
}

// encode returns the 4 little-endian bytes of v as type d.
func (d DataType) encode(v int32) uint32 {
	if d == Int32 {
		return uint32(v)
	}
	return math.Float32bits(float32(v))
}

// putElem stores v at element i of buf.
func (d DataType) putElem(buf []byte, i int64, v int32) {
	binary.LittleEndian.PutUint32(buf[i*elemSize:], d.encode(v))
}

// reduceInto sums src into dst elementwise (dst += src), both whole
// elements long.
func (d DataType) reduceInto(dst, src []byte) {
	for i := 0; i+elemSize <= len(dst); i += elemSize {
		a := binary.LittleEndian.Uint32(dst[i:])
		b := binary.LittleEndian.Uint32(src[i:])
		var s uint32
		if d == Int32 {
			s = uint32(int32(a) + int32(b))
		} else {
			s = math.Float32bits(math.Float32frombits(a) + math.Float32frombits(b))
		}
		binary.LittleEndian.PutUint32(dst[i:], s)
	}
}

// elemIs reports whether element i of buf is exactly v (bitwise, so a NaN
// or a -0 where 0 is expected counts as wrong).
func (d DataType) elemIs(buf []byte, i int64, v int32) bool {
	return binary.LittleEndian.Uint32(buf[i*elemSize:]) == d.encode(v)
}
