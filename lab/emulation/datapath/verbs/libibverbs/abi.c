/*
 * rocelab's libibverbs: the rest of rdma-core's public ABI (libibverbs.so.1
 * of rdma-core 44 and later, every symbol and version; TestSymbolSet keeps
 * the set whole). Pure helpers are implemented as rdma-core documents them
 * (rates, the kernel-ABI copies, address handles from a completion); what
 * the lab's NICs do not have fails as a provider without the feature does
 * (EOPNOTSUPP, or NULL with errno set).
 */
#include "rocelab.h"

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

/* ---- rates (IBTA: enum ibv_rate) ---- */

static const struct {
	enum ibv_rate rate;
	int mult; /* × 2.5 Gb/s (0: none; rdma-core gives the 64b/66b
		   * rates from 25 Gb/s on no multiple but for 28 and 50) */
	int mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },	      { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },	      { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },      { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },      { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },    { IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 0, 56250 },	      { IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 },     { IBV_RATE_25_GBPS, 0, 25781 },
	{ IBV_RATE_100_GBPS, 0, 103125 },    { IBV_RATE_200_GBPS, 0, 206250 },
	{ IBV_RATE_300_GBPS, 0, 309375 },   { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },      { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },   { IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};
#define NRATES (sizeof(rates) / sizeof(rates[0]))

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mult ? rates[i].mult : -1;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mult == mult && mult != 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- copies between the kernel's ABI structures and the library's ---- */

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* RL_PATH_REC_SCALARS lists the fields a path record has alike in the
 * verbs and the kernel's layout (the GIDs differ: raw[] against bytes). */
#define RL_PATH_REC_SCALARS(X)                                                                                     \
	X(dlid) X(slid) X(raw_traffic) X(flow_label) X(hop_limit) X(traffic_class) X(reversible) X(numb_path) X(pkey) \
	X(sl) X(mtu_selector) X(mtu) X(rate_selector) X(rate) X(packet_life_time) X(packet_life_time_selector)      \
	X(preference)
#define RL_COPY(f) dst->f = src->f;

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	RL_PATH_REC_SCALARS(RL_COPY)
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
	RL_PATH_REC_SCALARS(RL_COPY)
}

#undef RL_COPY
#undef RL_PATH_REC_SCALARS

/* ---- address handles from a received datagram ---- */

/*
 * ibv_init_ah_from_wc fills attr to answer the sender of the UD completion
 * wc: on RoCE every datagram carries a GRH (its first 40 bytes of the
 * receive buffer, grh), whose source GID becomes the destination, and
 * whose destination GID is looked up in the port's table for the source
 * index. RoCE v2 over IPv4 puts 20 undefined bytes and the IPv4 header
 * there instead, told apart by the version nibbles (6 at byte 0 for an
 * IPv6 header, 4 at byte 20 for IPv4); its GIDs are the IPv4-mapped
 * addresses.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	ah_attr->grh.hop_limit = 0xff;
	union ibv_gid here = grh->dgid;
	uint32_t flow = ntohl(grh->version_tclass_flow);
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	if (flow >> 28 != 6 && ip4[0] >> 4 == 4) {
		/* RoCE v2 over IPv4: 20 bytes, then the IPv4 header. The GIDs
		 * are the IPv4-mapped source and destination addresses. */
		memset(&ah_attr->grh.dgid, 0, sizeof(ah_attr->grh.dgid));
		memset(&here, 0, sizeof(here));
		ah_attr->grh.dgid.raw[10] = ah_attr->grh.dgid.raw[11] = 0xff;
		here.raw[10] = here.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], ip4 + 12, 4);
		memcpy(&here.raw[12], ip4 + 16, 4);
		ah_attr->grh.traffic_class = ip4[1];
	} else {
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.flow_label = flow & 0xfffff;
		ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
	}
	for (int i = 0; i < 256; i++) {
		union ibv_gid g;
		if (ibv_query_gid(context, port_num, i, &g) != 0)
			break;
		if (memcmp(&g, &here, sizeof(g)) == 0) {
			ah_attr->grh.sgid_index = i;
			return 0;
		}
	}
	errno = ENOENT;
	return ENOENT;
}

/* ---- what the lab's NICs do not have ---- */

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0; /* no promise of in-order placement: always a correct answer */
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	(void)mr, (void)flags, (void)pd, (void)addr, (void)length, (void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
				 int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	return rl_null(EOPNOTSUPP);
}

/* Objects shared between processes through the kernel's command fd: the
 * lab's NICs have no such fd. */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return rl_null(EOPNOTSUPP);
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	return rl_null(EOPNOTSUPP);
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	return rl_null(EOPNOTSUPP);
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context, (void)dm_handle;
	return rl_null(EOPNOTSUPP);
}

/* Nothing can have been imported, so there is nothing to let go. */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* ---- the provider interface's rest (IBVERBS_PRIVATE_34) ---- */

int ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *sysfs_dev, const char *fnfmt, ...);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, const char *sysfs_dev, const char *fnfmt, ...)
{
	(void)buf, (void)size, (void)sysfs_dev, (void)fnfmt;
	errno = ENOENT;
	return -1;
}

#define PRIVATE_FAIL(name)                                                                                   \
	int name(void);                                                                                      \
	int name(void)                                                                                       \
	{                                                                                                    \
		errno = EOPNOTSUPP;                                                                          \
		return EOPNOTSUPP;                                                                           \
	}
PRIVATE_FAIL(ibv_cmd_poll_cq)
PRIVATE_FAIL(ibv_cmd_post_recv)
PRIVATE_FAIL(ibv_cmd_post_send)
PRIVATE_FAIL(ibv_cmd_post_srq_recv)
PRIVATE_FAIL(ibv_cmd_req_notify_cq)

unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	(void)link;
	return num_attrs;
}

/* ---- the ABI of 2005 (IBVERBS_1.0) and the provider API of 2006 ----
 *
 * rdma-core keeps these for binaries built against libibverbs 1.0, whose
 * structures differ from today's: rocelab does not carry those layouts,
 * so each fails as a device without them would. Programs built since then
 * bind to the IBVERBS_1.1 versions (the default, "@@").
 */
#define COMPAT_FAIL(name, type, ret)                                                                         \
	type name##_1_0(void);                                                                               \
	type name##_1_0(void)                                                                                \
	{                                                                                                    \
		errno = EOPNOTSUPP;                                                                          \
		return ret;                                                                                  \
	}                                                                                                    \
	__asm__(".symver " #name "_1_0, " #name "@IBVERBS_1.0");
#define COMPAT_NULL(name) COMPAT_FAIL(name, void *, NULL)
#define COMPAT_ERR(name) COMPAT_FAIL(name, int, EOPNOTSUPP)
#define COMPAT_VOID(name)                                                                                    \
	void name##_1_0(void);                                                                               \
	void name##_1_0(void)                                                                                \
	{                                                                                                    \
	}                                                                                                    \
	__asm__(".symver " #name "_1_0, " #name "@IBVERBS_1.0");

COMPAT_VOID(ibv_ack_async_event)
COMPAT_VOID(ibv_ack_cq_events)
COMPAT_NULL(ibv_alloc_pd)
COMPAT_ERR(ibv_attach_mcast)
COMPAT_ERR(ibv_close_device)
COMPAT_NULL(ibv_create_ah)
COMPAT_NULL(ibv_create_cq)
COMPAT_NULL(ibv_create_qp)
COMPAT_NULL(ibv_create_srq)
COMPAT_ERR(ibv_dealloc_pd)
COMPAT_ERR(ibv_dereg_mr)
COMPAT_ERR(ibv_destroy_ah)
COMPAT_ERR(ibv_destroy_cq)
COMPAT_ERR(ibv_destroy_qp)
COMPAT_ERR(ibv_destroy_srq)
COMPAT_ERR(ibv_detach_mcast)
COMPAT_VOID(ibv_free_device_list)
COMPAT_ERR(ibv_get_async_event)
COMPAT_ERR(ibv_get_cq_event)
COMPAT_FAIL(ibv_get_device_guid, uint64_t, 0)
COMPAT_NULL(ibv_get_device_list)
COMPAT_NULL(ibv_get_device_name)
COMPAT_ERR(ibv_modify_qp)
COMPAT_ERR(ibv_modify_srq)
COMPAT_NULL(ibv_open_device)
COMPAT_ERR(ibv_query_device)
COMPAT_ERR(ibv_query_gid)
COMPAT_ERR(ibv_query_pkey)
COMPAT_ERR(ibv_query_port)
COMPAT_ERR(ibv_query_qp)
COMPAT_ERR(ibv_query_srq)
COMPAT_NULL(ibv_reg_mr)
COMPAT_ERR(ibv_resize_cq)

/* The provider registration of libibverbs 1.1 (providers today call
 * verbs_register_driver_34): rocelab loads no provider. */
void ibv_register_driver_1_1(const char *name, void *init_func);
void ibv_register_driver_1_1(const char *name, void *init_func)
{
	(void)name, (void)init_func;
}
__asm__(".symver ibv_register_driver_1_1, ibv_register_driver@IBVERBS_1.1");
