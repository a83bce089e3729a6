// Package cm is the InfiniBand Communication Manager's messages (IBTA
// vol. 1, ch. 12) as RoCEv2 NICs carry them: management datagrams (MADs)
// of class 0x07 in UD SENDs to QP1, the general services QP.
//
//   - Header is the 24-byte common MAD header; MAD is a whole 256-byte
//     datagram (header and message);
//   - REQ, REP, RTU, REJ, MRA, DREQ and DREP are the messages of a
//     connection's life, each with Append and Decode at the offsets of
//     IBTA tables 106–113;
//   - IPPrivate is the RDMA IP CM Service's header (IBTA annex A11) that
//     rdma_cm puts in front of a REQ's private data, and ServiceID names
//     an rdma_cm port space and port;
//   - Frame builds the RoCEv2 frame that carries a MAD to a peer's QP1.
//
// It holds no state machine: what to send and when is the endpoint's.
package cm
