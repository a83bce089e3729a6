// Package connmgr is a NIC's Communication Manager (IBTA vol. 1, ch. 12)
// as a model: the state machine of each connection a port makes or takes
// through CM MADs on QP1 (package wire/cm), on the clock it is handed.
//
// An active side Connects (REQ), hears Replied once the peer's REP came
// and Confirms it (RTU) when its QP is ready, or hears Rejected (REJ: no
// listener on the service ID, or the consumer said no), or Unreachable
// when its REQ went unanswered through every retry. A passive side
// Listens on a service ID, hears ConnectRequest, may Delay (MRA), and
// Accepts (REP) or Rejects (REJ); it hears Established on the RTU. A UD
// consumer Resolves a service ID instead (SIDR_REQ) and hears Established
// with the service's QP and Q_Key (SIDR_REP), or Rejected. Either side Disconnects (DREQ); the other hears
// Disconnected and answers DREP. Lost messages are sent again after the
// response timeout; duplicates are answered as the first was.
//
// It owns no goroutine and no socket: Receive takes a MAD that arrived on
// QP1, Config.Send puts one on the wire, Config.Event tells the consumer
// (rdma_cm's event channel, in the lab).
package connmgr
