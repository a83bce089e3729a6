/* rocelab's libibverbs: address handles. An address handle is the
 * library's own record of a destination (the NIC model takes a UD WR's
 * destination with the WR), checked as a RoCE NIC checks it. */
#include "rocelab.h"

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rl_ah *a;
	union ibv_gid g;

	/* RoCE routes by GID: an AH without a GRH names no destination. */
	if (attr->port_num != 1 || !attr->is_global)
		return rl_null(EINVAL);
	if (ibv_query_gid(pd->context, 1, attr->grh.sgid_index, &g))
		return rl_null(EINVAL);
	a = calloc(1, sizeof(*a));
	if (!a)
		return rl_null(ENOMEM);
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->attr = *attr;
	return &a->ah;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	free((struct rl_ah *)ah);
	return 0;
}
