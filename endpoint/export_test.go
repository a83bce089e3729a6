package endpoint

import "fmt"

// DebugState describes the QP's internal sequence state (tests only).
func (qp *QP) DebugState() string {
	r := &qp.req
	s := fmt.Sprintf("mode %v una %d next %d max %d alloc %d sq %d retx %d timer %v deadline %v now %v reads %d active %v",
		qp.mode, r.una-seqBase, r.nextSeq-seqBase, r.maxSent-seqBase, r.allocSeq-seqBase, len(r.sq), len(r.retx), r.rtoTimer != nil, r.rtoDeadline, qp.nic.sched.Now(), len(qp.rsp.reads), qp.active)
	if len(r.sq) > 0 {
		w := r.sq[0]
		s += fmt.Sprintf(" head{first %d n %d got %d hi %d rereq %d}", w.first-seqBase, w.npkts, w.got, w.hi, w.rereq-seqBase)
	}
	return s
}
