package chakra

import (
	"bufio"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// Write writes one rank's trace file as Chakra's converters do: meta (a
// GlobalMetadata of version 0.0.4 when nil), then the nodes, each message
// preceded by its length as a varint.
func Write(w io.Writer, meta *etpb.GlobalMetadata, nodes []*etpb.Node) error {
	if meta == nil {
		meta = &etpb.GlobalMetadata{Version: "0.0.4"}
	}
	bw := bufio.NewWriter(w)
	msgs := make([]proto.Message, 0, len(nodes)+1)
	msgs = append(msgs, meta)
	for _, n := range nodes {
		msgs = append(msgs, n)
	}
	for i, m := range msgs {
		if _, err := protodelim.MarshalTo(bw, m); err != nil {
			return fmt.Errorf("chakra: write message %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("chakra: write: %w", err)
	}
	return nil
}
