/*
 * pure.c prints what libibverbs's pure helpers answer over their whole
 * domain: run once against the system's library and once against
 * rocelab's, the two outputs must be the same (TestPureHelpers).
 */
#include <stdio.h>
#include <infiniband/verbs.h>

int main(void)
{
	for (int r = -1; r <= IBV_RATE_1200_GBPS + 1; r++)
		printf("rate %d: mult %d mbps %d\n", r, ibv_rate_to_mult((enum ibv_rate)r),
		       ibv_rate_to_mbps((enum ibv_rate)r));
	for (int m = -1; m <= 500; m++)
		printf("mult %d: rate %d\n", m, mult_to_ibv_rate(m));
	static const int mbps[] = { 0, 2500, 5000, 10000, 14062, 20000, 25781, 28125, 30000, 40000, 53125,
				    56250, 60000, 80000, 103125, 112500, 120000, 168750, 206250, 309375,
				    425000, 637500, 850000, 1275000, 100000, 400000 };
	for (unsigned i = 0; i < sizeof(mbps) / sizeof(mbps[0]); i++)
		printf("mbps %d: rate %d\n", mbps[i], mbps_to_ibv_rate(mbps[i]));
	for (int s = -1; s <= IBV_WC_TM_RNDV_INCOMPLETE + 1; s++)
		printf("wc status %d: %s\n", s, ibv_wc_status_str((enum ibv_wc_status)s));
	for (int e = -1; e <= IBV_EVENT_WQ_FATAL + 1; e++)
		printf("event %d: %s\n", e, ibv_event_type_str((enum ibv_event_type)e));
	for (int n = -2; n <= IBV_NODE_UNSPECIFIED + 1; n++)
		printf("node type %d: %s\n", n, ibv_node_type_str((enum ibv_node_type)n));
	for (int p = -1; p <= IBV_PORT_ACTIVE_DEFER + 1; p++)
		printf("port state %d: %s\n", p, ibv_port_state_str((enum ibv_port_state)p));
	return 0;
}
