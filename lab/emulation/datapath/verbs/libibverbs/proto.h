/*
 * The messages between rocelab's libibverbs.so.1 and an endpoint node's
 * verbs server (lab/emulation/verbs, proto.go mirrors this file; a test
 * compiles both and compares). One message per SOCK_SEQPACKET datagram,
 * native byte order (both ends run on one machine).
 */
#ifndef ROCELAB_VERBS_PROTO_H
#define ROCELAB_VERBS_PROTO_H

#include <stdint.h>

#define RL_PROTO_VERSION 2
#define RL_MAX_MSG (64 * 1024)
#define RL_MAX_INLINE 512
#define RL_MAX_PIECES 64
#define RL_MAX_SGE 16 /* entries of a WR's scatter/gather list */

enum rl_op {
	RL_OP_HELLO = 1,      /* -> rl_hello_reply + devices */
	RL_OP_OPEN = 2,       /* handle = NIC index */
	RL_OP_ALLOC_PD = 3,   /* -> rl_handle_reply */
	RL_OP_DEALLOC_PD = 4,
	RL_OP_REG_MR = 5,     /* rl_reg_mr + pieces, one fd per piece -> rl_mr_reply */
	RL_OP_DEREG_MR = 6,
	RL_OP_CREATE_CQ = 7,  /* rl_create_cq, one fd (the ring) -> rl_handle_reply */
	RL_OP_DESTROY_CQ = 8,
	RL_OP_CREATE_QP = 9,  /* rl_create_qp -> rl_qp_reply */
	RL_OP_MODIFY_QP = 10, /* rl_modify_qp */
	RL_OP_DESTROY_QP = 11,
	RL_OP_POST_SEND = 12, /* rl_post + rl_send_wr[n] + inline bytes; no reply */
	RL_OP_POST_RECV = 13, /* rl_post + rl_recv_wr[n]; no reply */
	RL_OP_QUERY_QP = 14,  /* -> rl_qp_state */
	RL_OP_CREATE_SRQ = 15, /* rl_create_srq -> rl_handle_reply */
	RL_OP_MODIFY_SRQ = 16, /* rl_modify_srq */
	RL_OP_QUERY_SRQ = 17,  /* -> rl_srq_state */
	RL_OP_DESTROY_SRQ = 18,
	RL_OP_POST_SRQ_RECV = 19, /* rl_post + rl_recv_wr[n]; no reply */

	/* rdma_cm (librdmacm/): a process's CM requests go on a connection
	 * of their own, which opens no device; each event channel is one end
	 * of a socketpair whose other end the node writes rl_cm_events to. */
	RL_OP_CM_CHANNEL = 20,       /* one fd: the channel's node end -> rl_handle_reply */
	RL_OP_CM_DESTROY_CHANNEL = 21,
	RL_OP_CM_CREATE_ID = 22,     /* rl_cm_create_id -> rl_handle_reply */
	RL_OP_CM_DESTROY_ID = 23,
	RL_OP_CM_BIND = 24,          /* rl_cm_addr -> rl_cm_bound */
	RL_OP_CM_RESOLVE_ADDR = 25,  /* rl_cm_resolve -> rl_cm_bound; event ADDR_RESOLVED or ADDR_ERROR */
	RL_OP_CM_RESOLVE_ROUTE = 26, /* event ROUTE_RESOLVED */
	RL_OP_CM_LISTEN = 27,
	RL_OP_CM_CONNECT = 28,       /* rl_cm_conn: REQ (RC) or SIDR_REQ (UD) */
	RL_OP_CM_ACCEPT = 29,        /* rl_cm_conn: REP or SIDR_REP */
	RL_OP_CM_REJECT = 30,        /* rl_cm_conn (its private data) */
	RL_OP_CM_ESTABLISH = 31,     /* the active side's QP is ready: RTU */
	RL_OP_CM_DISCONNECT = 32,    /* DREQ */
	RL_OP_CM_MIGRATE = 33,       /* rl_cm_create_id (its channel): events go there */
};

struct rl_hdr {
	uint32_t op;
	uint32_t handle;
	uint32_t len; /* payload bytes after the header */
	uint32_t pad;
};

struct rl_reply {
	int32_t err; /* 0 or an errno */
	uint32_t len;
	char msg[120]; /* what went wrong, for people */
};

struct rl_device {
	char name[64];  /* rocelab_host1_gpu0 */
	char nic[64];   /* host1:gpu0 */
	uint8_t mac[6];
	uint8_t pad[2];
	uint8_t ipv4[4];
	uint32_t mtu;   /* RDMA payload bytes */
	uint64_t rate_bps; /* fabric line rate */
	uint32_t scale; /* scale factor k */
	uint32_t max_qp;
};

/* RL_OP_OPEN's payload: the transport the program's QPs use (empty: the
 * node's default). */
struct rl_open {
	char cc[16];   /* none, dcqcn, credit */
	char mode[16]; /* rocev2, metaroce */
};

struct rl_hello_reply {
	uint32_t version;
	uint32_t ndev;
	/* struct rl_device[ndev] follows */
};

struct rl_handle_reply {
	uint32_t handle;
	uint32_t pad;
};

struct rl_piece {
	uint64_t addr;   /* first byte in the program's address space */
	uint64_t len;
	uint64_t offset; /* offset of addr in the piece's memfd */
};

struct rl_reg_mr {
	uint32_t pd;
	uint32_t access; /* IBV_ACCESS_* */
	uint64_t addr;
	uint64_t len;
	uint32_t npieces;
	uint32_t pad;
	/* struct rl_piece[npieces] follows; piece i's fd is the i-th SCM_RIGHTS fd */
};

struct rl_mr_reply {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t pad;
};

/* The completion ring: the node writes entries and then head; the
 * library reads entries up to head and then writes tail. */
#define RL_RING_HEAD 0
#define RL_RING_TAIL 64
#define RL_RING_ENTRIES 128

struct rl_cqe {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm; /* network order, as ibv_wc.imm_data */
	uint32_t qp_num;
	uint8_t status;   /* enum ibv_wc_status */
	uint8_t opcode;   /* enum ibv_wc_opcode */
	uint8_t wc_flags; /* IBV_WC_WITH_IMM, IBV_WC_GRH */
	/* UD receives over RoCE: the packet type, as mlx5 NICs report it in
	 * ibv_wc.sl and UCX reads it: bit 3 a UDP header, bits 2..0 the L3
	 * header (0x2 IPv4, 0x1 IPv6). */
	uint8_t sl;
	uint32_t vendor_err;
	uint32_t src_qp; /* UD receives: the sender's QP */
};

struct rl_create_cq {
	uint32_t entries; /* a power of two */
	uint32_t pad;
};

struct rl_create_qp {
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_inline;
	uint32_t sq_sig_all;
	uint32_t srq; /* 0: the QP's own receive queue */
	uint32_t qp_type; /* enum ibv_qp_type: IBV_QPT_RC or IBV_QPT_UD */
	uint32_t pad;
};

struct rl_create_srq {
	uint32_t pd;
	uint32_t max_wr;
	uint32_t limit;
	uint32_t pad;
};

#define RL_SRQ_MAX_WR 1 /* IBV_SRQ_MAX_WR */
#define RL_SRQ_LIMIT 2  /* IBV_SRQ_LIMIT */

struct rl_modify_srq {
	uint32_t mask;
	uint32_t max_wr;
	uint32_t limit;
	uint32_t pad;
};

struct rl_srq_state {
	uint32_t max_wr;
	uint32_t limit;
	uint32_t len; /* WQEs the SRQ holds */
	uint32_t pad;
};

struct rl_qp_reply {
	uint32_t handle;
	uint32_t qpn;
};

/* rl_modify_qp.mask bits: the IBV_QP_* attribute mask, as given. */
struct rl_modify_qp {
	uint32_t mask;
	uint32_t state;     /* enum ibv_qp_state */
	uint32_t access;
	uint32_t mtu;       /* path MTU in bytes */
	uint32_t dest_qpn;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t timeout;
	uint32_t retry_cnt;
	uint32_t rnr_retry;
	uint32_t min_rnr_timer;
	uint32_t qkey; /* IBV_QP_QKEY (UD) */
	uint8_t dgid[16];
};

struct rl_qp_state {
	uint32_t state; /* enum ibv_qp_state */
	uint32_t pad;
};

struct rl_post {
	uint32_t n;
	uint32_t pad;
};

#define RL_WR_SIGNALED 1
#define RL_WR_INLINE 2
#define RL_WR_IMM 4
/* The WR's scatter/gather list goes on in the trailing area: inline_len
 * bytes of struct rl_sge after its first entry (addr, length, lkey). */
#define RL_WR_SGL 8
/* A UD WR: its struct rl_ud_dest comes first in its share of the
 * trailing area, before its inline bytes or list. */
#define RL_WR_UD 16
/* An atomic WR (IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD):
 * its struct rl_atomic comes first in its share of the trailing area,
 * before its list. */
#define RL_WR_ATOMIC 32

struct rl_atomic {
	uint64_t compare_add; /* CmpSwap: the compare value; FetchAdd: the addend */
	uint64_t swap;
};

struct rl_ud_dest {
	uint8_t dgid[16]; /* the address handle's destination GID */
	uint32_t qpn;
	uint32_t qkey;
};

/* rl_send_wr.opcode: enum ibv_wr_opcode (SEND, SEND_WITH_IMM, RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD). */
struct rl_send_wr {
	uint64_t wr_id;
	uint64_t addr;
	uint64_t remote_addr;
	uint32_t length;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t imm; /* network order */
	uint8_t opcode;
	uint8_t flags;
	uint16_t inline_len; /* bytes of this WR in the inline area */
	uint32_t pad;
};

struct rl_recv_wr {
	uint64_t wr_id;
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
	uint32_t nsge; /* entries after the first, in the trailing area */
	uint32_t pad;
};

/* One more entry of a WR's scatter/gather list, in a POST's trailing area
 * (after the WRs: a send WR's inline bytes and lists in WR order; a
 * receive WR's lists in WR order). */
struct rl_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* An rdma_cm address: IPv6, or IPv4 mapped (::ffff:a.b.c.d); all zero
 * is any address. */
struct rl_cm_addr {
	uint8_t addr[16];
	uint16_t port; /* host order */
	uint16_t family; /* AF_INET or AF_INET6: how the program gave it */
	uint32_t pad;
};

struct rl_cm_create_id {
	uint32_t channel;
	uint32_t ps;      /* enum rdma_port_space */
	uint32_t qp_type; /* enum ibv_qp_type */
	uint32_t pad;
};

struct rl_cm_resolve {
	struct rl_cm_addr src; /* any: the node picks the NIC */
	struct rl_cm_addr dst;
	uint32_t timeout_ms;
	uint32_t pad;
};

struct rl_cm_bound {
	int32_t nic; /* the device's index; -1: every NIC (a wildcard bind) */
	uint32_t pad;
	struct rl_cm_addr src;
	struct rl_cm_addr dst; /* resolution: the peer NIC's address */
};

#define RL_CM_PRIVATE 256

struct rl_cm_conn {
	uint32_t qpn;
	uint32_t psn;
	uint32_t qkey;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t path_mtu; /* enum ibv_mtu; 0: not said */
	uint8_t pad[2];
	uint32_t private_len;
	uint8_t private_data[RL_CM_PRIVATE];
};

/* An event, written by the node to a channel: event is an
 * RDMA_CM_EVENT_*; CONNECT_RESPONSE is the active side's REP, which the
 * library turns into ESTABLISHED once it readied the QP. */
struct rl_cm_event {
	uint32_t id;
	uint32_t event;
	int32_t status;
	uint32_t listen_id; /* CONNECT_REQUEST: the listener; id is new */
	int32_t nic;
	uint32_t pad;
	struct rl_cm_addr src, dst;
	struct rl_cm_conn conn; /* the peer's side */
};

#endif
