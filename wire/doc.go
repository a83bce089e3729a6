// Package wire holds rocelab's frame codecs: Ethernet (with an optional
// 802.1Q tag), IPv4 and IPv6, UDP, the RoCEv2 transport headers (BTH, RETH,
// AETH, ImmDt), CNP, the invariant CRC (ICRC), and 802.1Qbb PFC and 802.3x
// PAUSE MAC control frames.
//
// It has two faces:
//
//   - a zero-allocation fast path for the models: [Packet.Decode] parses a
//     frame into the reusable descriptor [Packet], [AppendFrame] builds a
//     complete frame from one, and [Packet.MarkCE] rewrites the ECN bits in
//     place;
//   - [Samples] and [WriteSamplesPcap]: one frame of every kind the lab
//     emits, for tests and for checking a Wireshark against the codecs.
//
// Beside it, wire/capture reads captures back and gives gopacket the same
// headers as layers; wire/pcap writes captures. Neither gopacket nor its
// layer tables are linked by what imports only wire (every node process),
// which keeps a node's start-up short. wire/metaroce is MetaRoCE's wire
// format, wire/pipe the simulator's in-order delay line, wire/pause
// the receive side of PFC and PAUSE, wire/cm the Communication
// Manager's MADs (REQ, REP, RTU, REJ, MRA, DREQ, DREP) as RoCEv2 carries
// them to QP1, and wire/wiretest the frames and descriptors tests build.
//
// The package holds no policy: what to send and when is the models' job.
package wire
