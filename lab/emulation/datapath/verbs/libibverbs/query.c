/* rocelab's libibverbs: device, port and GID queries. */
#include "rocelab.h"

/* ---- queries ---- */

static enum ibv_mtu rl_mtu_enum(uint32_t bytes)
{
	if (bytes >= 4096)
		return IBV_MTU_4096;
	if (bytes >= 2048)
		return IBV_MTU_2048;
	if (bytes >= 1024)
		return IBV_MTU_1024;
	if (bytes >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct rl_ctx *c = ctx_of(context);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "rocelab %u", RL_PROTO_VERSION);
	a->node_guid = rl_guid(c->dev->info.mac);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = 1ULL << 40;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0x0;
	a->vendor_part_id = 0x1ce;
	a->hw_ver = 1;
	a->max_qp = (int)c->dev->info.max_qp;
	a->max_qp_wr = 32768;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = RL_MAX_SGE;
	a->max_sge_rd = RL_MAX_SGE;
	a->max_cq = 65536;
	a->max_cqe = 1 << 22;
	a->max_mr = 1 << 20;
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->max_res_rd_atom = 16 * a->max_qp;
	/* Atomics are atomic among the NIC's own and the host CPU's
	 * (the node runs them with the CPU's atomic instructions on the
	 * program's memory): IBV_ATOMIC_GLOB. */
	a->atomic_cap = IBV_ATOMIC_GLOB;
	a->max_srq = 65536;
	a->max_srq_wr = 32768;
	a->max_srq_sge = RL_MAX_SGE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	return 0;
}

/* rl_speed picks the IB width and speed codes that multiply to the rate. */
static void rl_speed(uint64_t bps, uint8_t *width, uint8_t *speed)
{
	static const struct {
		uint64_t lane;
		uint8_t code;
	} speeds[] = { { 100000000000ULL, 128 /* NDR */ }, { 50000000000ULL, 64 /* HDR */ },
		       { 25000000000ULL, 32 /* EDR */ },   { 10000000000ULL, 16 /* FDR10 */ },
		       { 5000000000ULL, 4 /* QDR */ },     { 2500000000ULL, 1 /* SDR */ } };
	static const struct {
		int lanes;
		uint8_t code;
	} widths[] = { { 1, 1 }, { 4, 2 }, { 8, 4 }, { 12, 8 } };
	size_t i, j;

	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		for (j = 0; j < sizeof(widths) / sizeof(widths[0]); j++)
			if (speeds[i].lane * widths[j].lanes == bps) {
				*width = widths[j].code;
				*speed = speeds[i].code;
				return;
			}
	*width = 2;
	*speed = 32;
}

static int rl_port_attr(struct rl_ctx *c, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	struct ibv_port_attr p;

	if (port != 1) {
		errno = EINVAL;
		return EINVAL;
	}
	memset(&p, 0, sizeof(p));
	p.state = c->dead ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	p.max_mtu = IBV_MTU_4096;
	p.active_mtu = rl_mtu_enum(c->dev->info.mtu);
	p.gid_tbl_len = 4;
	p.port_cap_flags = IBV_PORT_CM_SUP;
	p.max_msg_sz = 1U << 31;
	p.pkey_tbl_len = 1;
	p.link_layer = IBV_LINK_LAYER_ETHERNET;
	p.phys_state = c->dead ? 3 /* disabled */ : 5 /* link up */;
	rl_speed(c->dev->info.rate_bps, &p.active_width, &p.active_speed);
	memcpy(a, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

int rl_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len)
{
	return rl_port_attr(ctx_of(ctx), port, attr, len);
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	/* The compat struct is ibv_port_attr without its last two fields. */
	return rl_port_attr(ctx_of(context), port, (struct ibv_port_attr *)attr,
			    offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* The RoCE GID table as NICs lay it out: 0 and 1 are the link-local
 * address from the MAC (RoCE v1, v2), 2 and 3 the IPv4-mapped BE address
 * (RoCE v1, v2). */
static int rl_gid(struct rl_ctx *c, int index, union ibv_gid *gid, enum ibv_gid_type *type)
{
	const struct rl_device *d = &c->dev->info;

	if (index < 0 || index > 3)
		return -1;
	memset(gid, 0, sizeof(*gid));
	if (index < 2) {
		uint64_t g = rl_guid(d->mac);
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		memcpy(&gid->raw[8], &g, 8);
	} else {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], d->ipv4, 4);
	}
	if (type)
		*type = (index & 1) ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1)
		return -1;
	return rl_gid(ctx_of(context), index, gid, NULL);
}

/* ibv_query_gid_type is rdma-core's private call (IBVERBS_PRIVATE_34): its
 * type is the sysfs enum, 0 for RoCE v1 and 1 for RoCE v2. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port, unsigned int index, int *type)
{
	union ibv_gid g;
	enum ibv_gid_type t;
	if (port != 1 || rl_gid(ctx_of(context), (int)index, &g, &t))
		return -1;
	*type = t == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port, uint32_t index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	enum ibv_gid_type t;

	(void)flags;
	if (port != 1 || index > 3)
		return EINVAL;
	memset(&e, 0, sizeof(e));
	rl_gid(ctx_of(context), (int)index, &e.gid, &t);
	e.gid_index = index;
	e.port_num = 1;
	e.gid_type = t == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_IB;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	size_t i;
	for (i = 0; i < 4 && i < max_entries; i++)
		_ibv_query_gid_ex(context, 1, i, (struct ibv_gid_entry *)((char *)entries + i * entry_size), flags,
				  entry_size);
	return (ssize_t)i;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port, int index, __be16 *pkey)
{
	(void)context;
	if (port != 1 || index != 0)
		return -1;
	*pkey = htons(0xffff);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port, __be16 pkey)
{
	(void)context;
	return port == 1 && pkey == htons(0xffff) ? 0 : -1;
}
