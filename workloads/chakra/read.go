package chakra

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rocelab/rocelab/internal/readcap"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// Caps of what a trace file may hold.
const (
	MaxFileBytes    = 4 << 30  // one rank's file
	MaxMessageBytes = 64 << 20 // one message of it
)

// LoadDir loads the traces PREFIX.RANK.et in dir: every rank from 0 to the
// highest present must have its file. An empty prefix is the one the
// folder's traces share (OnlyPrefix).
func LoadDir(dir, prefix string) ([]*Trace, error) {
	if prefix == "" {
		p, err := OnlyPrefix(dir)
		if err != nil {
			return nil, err
		}
		prefix = p
	}
	pattern := filepath.Join(dir, prefix+".*.et")
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("chakra: listing %s: %w", pattern, err)
	}
	if len(files) == 0 {
		return nil, ErrorList{{File: pattern, Msg: "no trace files"}}
	}
	return Load(files)
}

// Load loads one trace file per rank, named PREFIX.RANK.et (the rank is the
// number before .et), in any order. The ranks must be 0..N-1, each once.
// The traces are returned by rank. A trace that does not decode or validate
// gives an ErrorList of every problem found; a file that cannot be opened
// gives a plain error.
func Load(files []string) ([]*Trace, error) {
	byRank := map[int]string{}
	var errs ErrorList
	for _, f := range files {
		r, err := rankOf(f)
		if err != nil {
			errs = append(errs, &Error{File: f, Rank: -1, Msg: err.Error()})
			continue
		}
		if prev, dup := byRank[r]; dup {
			errs = append(errs, &Error{File: f, Rank: r, Msg: fmt.Sprintf("rank %d again (also %s)", r, prev)})
			continue
		}
		byRank[r] = f
	}
	n := 0
	for r := range byRank {
		n = max(n, r+1)
	}
	for r := range n {
		if _, ok := byRank[r]; !ok {
			errs = append(errs, &Error{File: missingName(files, r), Rank: r, Msg: fmt.Sprintf("rank %d is missing: ranks must be 0..%d", r, n-1)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	traces := make([]*Trace, n)
	for r := range n {
		t, err := ReadFile(byRank[r], r)
		var l ErrorList
		if errors.As(err, &l) {
			errs = append(errs, l...)
			continue
		} else if err != nil {
			return nil, err
		}
		traces[r] = t
	}
	if len(errs) == 0 {
		errs = checkPeers(traces)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return traces, nil
}

// rankOf returns the rank in a file name PREFIX.RANK.et.
func rankOf(file string) (int, error) {
	base, ok := strings.CutSuffix(filepath.Base(file), ".et")
	if !ok {
		return 0, errors.New("not a trace file: want PREFIX.RANK.et")
	}
	i := strings.LastIndexByte(base, '.')
	r, err := strconv.Atoi(base[i+1:])
	if i < 0 || err != nil || r < 0 || strconv.Itoa(r) != base[i+1:] {
		return 0, errors.New("no rank in the name: want PREFIX.RANK.et")
	}
	return r, nil
}

// missingName names the file rank r would have, after the first file's prefix.
func missingName(files []string, r int) string {
	f := files[0]
	base := strings.TrimSuffix(f, ".et")
	return base[:strings.LastIndexByte(base, '.')+1] + strconv.Itoa(r) + ".et"
}

// ReadFile reads and validates the trace of rank in file.
func ReadFile(file string, rank int) (*Trace, error) {
	f, err := readcap.Open(file, MaxFileBytes, "chakra trace")
	if err != nil {
		return nil, fmt.Errorf("chakra: %w", err)
	}
	defer f.Close()
	return Read(f, file, rank)
}

// Read decodes and validates one rank's trace from r; file names it in
// errors. It returns an ErrorList when the stream is truncated or holds a
// message that does not decode (the first such problem ends the read), or
// when nodes do not validate (every node problem is listed).
func Read(r io.Reader, file string, rank int) (*Trace, error) {
	t := &Trace{File: file, Rank: rank, index: map[uint64]int{}}
	fail := func(off int64, format string, a ...any) (*Trace, error) {
		return nil, ErrorList{{File: file, Rank: rank, Offset: off, Msg: fmt.Sprintf(format, a...)}}
	}
	br := &countReader{r: bufio.NewReaderSize(r, 1<<16)}
	var errs ErrorList
	for rec := 0; ; rec++ {
		off := br.n
		size, err := binary.ReadUvarint(br)
		switch {
		case err == io.EOF && rec == 0:
			return fail(off, "empty: no GlobalMetadata")
		case err == io.EOF:
			return t, t.validate(errs)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fail(off, "truncated: the file ends inside the length of message %d", rec)
		case err != nil:
			return fail(off, "message %d: bad length prefix: %v", rec, err)
		case size > MaxMessageBytes:
			return fail(off, "message %d declares %d bytes (cap %d)", rec, size, MaxMessageBytes)
		}
		buf := make([]byte, size)
		if n, err := io.ReadFull(br, buf); errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return fail(off, "truncated: message %d declares %d bytes, the file has %d more", rec, size, n)
		} else if err != nil {
			return nil, fmt.Errorf("chakra: reading %s: %w", file, err)
		}
		if rec == 0 {
			t.Meta = &etpb.GlobalMetadata{}
			if err := proto.Unmarshal(buf, t.Meta); err != nil {
				return fail(off, "message 0 is not a GlobalMetadata: %v", err)
			}
			continue
		}
		pb := &etpb.Node{}
		if err := proto.Unmarshal(buf, pb); err != nil {
			return fail(off, "message %d is not a Node: %v", rec, err)
		}
		n, bad := convert(pb)
		for _, msg := range bad {
			errs = append(errs, &Error{File: file, Rank: rank, Node: new(n.Ref()), Msg: msg})
		}
		if _, dup := t.index[n.ID]; dup {
			errs = append(errs, &Error{File: file, Rank: rank, Node: new(n.Ref()), Msg: "duplicate node id"})
			continue
		}
		t.index[n.ID] = len(t.Nodes)
		t.Nodes = append(t.Nodes, n)
	}
}

// countReader counts the bytes read through it, for offsets in errors.
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// checkPeers checks every send's and receive's peer against the number of
// ranks.
func checkPeers(traces []*Trace) ErrorList {
	var errs ErrorList
	for _, t := range traces {
		for _, n := range t.Nodes {
			if (n.Kind == Send || n.Kind == Recv) && (n.Peer < 0 || n.Peer >= len(traces) || n.Peer == t.Rank) {
				errs = append(errs, &Error{File: t.File, Rank: t.Rank, Node: new(n.Ref()),
					Msg: fmt.Sprintf("%s peer %d is not another rank of 0..%d", n.Kind, n.Peer, len(traces)-1)})
			}
		}
	}
	return errs
}

// OnlyPrefix returns the PREFIX of the PREFIX.RANK.et files in dir, when
// they all have the same.
func OnlyPrefix(dir string) (string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.et"))
	seen := map[string]bool{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".et")
		if i := strings.LastIndexByte(base, '.'); i > 0 {
			seen[base[:i]] = true
		}
	}
	prefixes := make([]string, 0, len(seen))
	for p := range seen {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	switch len(prefixes) {
	case 0:
		return "", fmt.Errorf("chakra: %s: no Chakra traces (PREFIX.RANK.et)", dir)
	case 1:
		return prefixes[0], nil
	}
	return "", fmt.Errorf("chakra: %s: traces of %d prefixes (%s): say which with --prefix", dir, len(prefixes), strings.Join(prefixes, ", "))
}
