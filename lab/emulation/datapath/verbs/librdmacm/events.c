/*
 * events.c: reading a channel's events, and what rdma_cm does with them
 * before the program sees them (a REP readies the QP, a DREQ flushes it).
 */
#include "rdmacm.h"

#include <unistd.h>

static const char *const event_names[] = {
	"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_RESOLVED",
	"RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED",
	"RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR", "RDMA_CM_EVENT_ADDR_CHANGE",
	"RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned)event < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[event];
	return "UNKNOWN EVENT";
}

/* new_request makes the id of a connection request, on its listener's
 * channel. */
static struct rl_cm_id *new_request(struct rl_cm_id *l, const struct rl_cm_event *e)
{
	struct rl_cm_id *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->h = e->id;
	p->nic = e->nic;
	p->id.channel = l->id.channel;
	p->id.context = l->id.context;
	p->id.ps = l->id.ps;
	p->id.qp_type = l->id.qp_type;
	p->id.verbs = rl_device_of(&e->src);
	p->id.port_num = 1;
	p->psn = (uint32_t)random() & 0xffffff;
	rl_addr_to_sockaddr(&e->src, &p->id.route.addr.src_storage);
	rl_addr_to_sockaddr(&e->dst, &p->id.route.addr.dst_storage);
	memcpy(p->id.route.addr.addr.ibaddr.sgid.raw, e->src.addr, 16);
	memcpy(p->id.route.addr.addr.ibaddr.dgid.raw, e->dst.addr, 16);
	p->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	return p;
}

/* set_path fills the id's one path record, as route resolution gives it. */
static void set_path(struct rl_cm_id *p)
{
	struct ibv_sa_path_rec *r = &p->path;
	struct ibv_port_attr pa;

	memset(r, 0, sizeof(*r));
	r->sgid = p->id.route.addr.addr.ibaddr.sgid;
	r->dgid = p->id.route.addr.addr.ibaddr.dgid;
	r->dlid = r->slid = htons(0xffff);
	r->hop_limit = 64;
	r->pkey = htons(0xffff);
	r->mtu = IBV_MTU_1024;
	if (p->id.verbs && ibv_query_port(p->id.verbs, 1, &pa) == 0) {
		r->mtu = pa.active_mtu;
		r->rate = 0;
	}
	r->mtu_selector = 2;
	r->rate_selector = 2;
	r->packet_life_time_selector = 2;
	r->packet_life_time = 14;
	r->numb_path = 1;
	r->reversible = 1;
	if (!p->id.route.path_rec)
		p->id.route.path_rec = malloc(sizeof(*r));
	if (p->id.route.path_rec) {
		*p->id.route.path_rec = *r;
		p->id.route.num_paths = 1;
	}
}

/* process turns a node's event into the program's, doing what rdma_cm
 * does on the way; false drops it (an id the program destroyed). */
static bool process(struct rl_event *out, const struct rl_cm_event *e)
{
	struct rdma_cm_event *ev = &out->ev;
	struct rl_cm_id *p, *l = NULL;
	uint32_t n = e->conn.private_len < RL_CM_PRIVATE ? e->conn.private_len : RL_CM_PRIVATE;

	memset(ev, 0, sizeof(*ev));
	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		l = rl_id_of(e->listen_id);
		if (!l) {
			/* Its listener is gone (destroyed while the request was on
			 * its way, as perftest's server does between its two
			 * connections): refuse it, as the kernel's rdma_cm does,
			 * so that the peer does not wait out the MRA. */
			struct rl_cm_conn none = {0};

			rl_cm_call(RL_OP_CM_REJECT, e->id, &none, sizeof(none), -1, NULL, 0);
			rl_cm_call(RL_OP_CM_DESTROY_ID, e->id, NULL, 0, -1, NULL, 0);
			return false;
		}
		p = new_request(l, e);
		if (!p)
			return false;
		rl_ids_add(p);
	} else {
		p = rl_id_of(e->id);
		if (!p)
			return false;
	}
	ev->id = &p->id;
	ev->listen_id = l ? &l->id : NULL;
	ev->event = e->event;
	ev->status = e->status;
	memcpy(out->private_data, e->conn.private_data, n);
	if (p->id.qp_type == IBV_QPT_UD && (e->event == RDMA_CM_EVENT_CONNECT_REQUEST || e->event == RDMA_CM_EVENT_ESTABLISHED)) {
		ev->param.ud.private_data = n ? out->private_data : NULL;
		ev->param.ud.private_data_len = n > 255 ? 255 : n;
		ev->param.ud.qp_num = e->conn.qpn;
		ev->param.ud.qkey = e->conn.qkey;
		if (e->event == RDMA_CM_EVENT_ESTABLISHED)
			rl_ah_attr(p, &ev->param.ud.ah_attr);
	} else {
		ev->param.conn.private_data = n ? out->private_data : NULL;
		ev->param.conn.private_data_len = n > 255 ? 255 : n;
		ev->param.conn.responder_resources = e->conn.responder_resources;
		ev->param.conn.initiator_depth = e->conn.initiator_depth;
		ev->param.conn.retry_count = e->conn.retry_count;
		ev->param.conn.rnr_retry_count = e->conn.rnr_retry_count;
		ev->param.conn.srq = e->conn.srq;
		ev->param.conn.qp_num = e->conn.qpn;
	}
	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!p->id.verbs)
			p->id.verbs = rl_device_of(&e->src);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		set_path(p);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		p->remote_qpn = e->conn.qpn;
		p->remote_psn = e->conn.psn;
		p->remote_rr = e->conn.responder_resources;
		p->remote_depth = e->conn.initiator_depth;
		p->remote_mtu = e->conn.path_mtu;
		p->retry = e->conn.retry_count;
		set_path(p);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		p->remote_qpn = e->conn.qpn;
		p->remote_psn = e->conn.psn;
		p->remote_rr = e->conn.responder_resources;
		p->remote_depth = e->conn.initiator_depth;
		if (!p->id.qp)
			break; /* the program readies its own QP, then rdma_establish */
		if (rl_qp_connect(p) < 0) {
			ev->event = RDMA_CM_EVENT_CONNECT_ERROR;
			ev->status = -errno;
			rdma_reject(&p->id, NULL, 0);
			break;
		}
		if (rdma_establish(&p->id) < 0) {
			ev->event = RDMA_CM_EVENT_CONNECT_ERROR;
			ev->status = -errno;
			break;
		}
		ev->event = RDMA_CM_EVENT_ESTABLISHED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
		rl_qp_error(p);
		break;
	}
	return true;
}

static int read_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rl_cm_event e;
	struct rl_event *out;
	ssize_t n;

	for (;;) {
		do
			n = read(channel->fd, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1; /* EAGAIN on a non-blocking channel */
		if (n == 0) {
			errno = ENODEV; /* the node went away */
			return -1;
		}
		if (n < (ssize_t)sizeof(e))
			continue;
		out = calloc(1, sizeof(*out));
		if (!out) {
			errno = ENOMEM;
			return -1;
		}
		if (process(out, &e)) {
			*event = &out->ev;
			return 0;
		}
		free(out);
	}
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	if (!channel || !event) {
		errno = EINVAL;
		return -1;
	}
	return read_event(channel, event);
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);
	return 0;
}

/* rl_wait_event reads p's channel until the event of a synchronous call
 * comes: 0 and the event, or -1 with errno (the event said no). */
int rl_wait_event(struct rl_cm_id *p, enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;

	for (;;) {
		if (read_event(p->id.channel, &ev) < 0)
			return -1;
		if (ev->event == want) {
			*out = ev;
			return 0;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_REJECTED:
			errno = ECONNREFUSED;
			break;
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
			errno = ev->status < 0 ? -ev->status : EHOSTUNREACH;
			break;
		case RDMA_CM_EVENT_CONNECT_ERROR:
			errno = ev->status < 0 ? -ev->status : ECONNABORTED;
			break;
		default:
			rdma_ack_cm_event(ev);
			continue;
		}
		rdma_ack_cm_event(ev);
		return -1;
	}
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rl_cm_id *l = (struct rl_cm_id *)listen;
	struct rdma_cm_event *ev;

	if (!l->sync) {
		errno = EINVAL;
		return -1;
	}
	if (rl_wait_event(l, RDMA_CM_EVENT_CONNECT_REQUEST, &ev) < 0)
		return -1;
	*id = ev->id;
	rdma_ack_cm_event(ev);
	struct rl_cm_id *p = (struct rl_cm_id *)*id;

	/* a synchronous request gets a channel of its own, as its listener */
	if (rdma_migrate_id(*id, NULL) < 0)
		return -1;
	if (l->ep_attr) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(*id, l->ep_pd, &a) < 0) {
			rdma_destroy_id(*id);
			return -1;
		}
	}
	(void)p;
	return 0;
}
