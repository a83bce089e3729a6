"""pyverbs_write: an RDMA WRITE with Debian's unmodified pyverbs, from a QP on
the host's first lab NIC to one on its second (through the rack switch).
Prints "pyverbs: ok" and exits 0, or raises."""
import time

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
names = [x.name.decode() for x in d.get_device_list()]
assert len(names) >= 2, f"want two lab NICs, have {names}"


class End:
    def __init__(self, name):
        self.ctx = d.Context(name=name)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 16)
        self.mr = MR(self.pd, 65536, ACCESS)
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, cap=cap))
        self.gid = self.ctx.query_gid(1, 3)  # RoCE v2, the NIC's BE address


def connect(a, b):
    attr = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
    attr.qp_access_flags = ACCESS
    a.qp.to_init(attr)
    attr = QPAttr(qp_state=e.IBV_QPS_RTR, port_num=1)
    attr.path_mtu = e.IBV_MTU_4096
    attr.dest_qp_num = b.qp.qp_num
    attr.rq_psn = 0
    attr.max_dest_rd_atomic = 1
    attr.min_rnr_timer = 12
    attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=b.gid, sgid_index=3), is_global=1, port_num=1)
    a.qp.to_rtr(attr)
    attr.qp_state = e.IBV_QPS_RTS
    attr.sq_psn = 0
    attr.timeout, attr.retry_cnt, attr.rnr_retry, attr.max_rd_atomic = 14, 7, 7, 1
    a.qp.to_rts(attr)


a, b = End(names[0]), End(names[1])
connect(a, b)
connect(b, a)
data = bytes((i * 7 + 1) % 256 for i in range(50000))
a.mr.write(data, len(data))
wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(a.mr.buf, len(data), a.mr.lkey)])
wr.set_wr_rdma(b.mr.rkey, b.mr.buf + 1000)
a.qp.post_send(wr)
deadline = time.time() + 60
while True:
    n, wcs = a.cq.poll()
    if n:
        break
    assert time.time() < deadline, "no completion in 60 s"
    time.sleep(0.001)
assert wcs[0].status == e.IBV_WC_SUCCESS, f"completion status {wcs[0].status}"
got = b.mr.read(len(data), 1000)
assert got == data, "the bytes are not in the target's memory"
print("pyverbs: ok")
