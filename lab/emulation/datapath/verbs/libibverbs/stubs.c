/*
 * Symbols that programs and the system's provider libraries (libmlx5,
 * libefa, librdmacm, which perftest links) import from libibverbs but that
 * rocelab does not implement. The dynamic loader needs every one of them
 * (perftest is linked with BIND_NOW); none works: each fails as a provider
 * without the feature does, with EOPNOTSUPP (or NULL and errno set).
 * verbs_register_driver_34 is called by the providers' constructors and
 * does nothing: rocelab loads no provider.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define STUB_FAIL(type, name, ret)                                                                           \
	type name(void);                                                                                     \
	type name(void)                                                                                      \
	{                                                                                                    \
		errno = EOPNOTSUPP;                                                                          \
		return ret;                                                                                  \
	}
#define STUB_NULL(name) STUB_FAIL(void *, name, NULL)
#define STUB_ERR(name) STUB_FAIL(int, name, EOPNOTSUPP)
#define STUB_VOID(name)                                                                                      \
	void name(void);                                                                                     \
	void name(void)                                                                                      \
	{                                                                                                    \
	}

/* Public verbs rocelab does not model: multicast. */
STUB_ERR(ibv_attach_mcast)
STUB_ERR(ibv_detach_mcast)

/* The provider interface (IBVERBS_PRIVATE_34). */
bool verbs_allow_disassociate_destroy;
STUB_VOID(verbs_register_driver_34)
STUB_VOID(__verbs_log)
STUB_NULL(_verbs_init_and_alloc_context)
STUB_NULL(verbs_open_device)
STUB_VOID(verbs_set_ops)
STUB_VOID(verbs_uninit_context)
STUB_ERR(verbs_init_cq)
STUB_ERR(execute_ioctl)
STUB_ERR(ibv_cmd_advise_mr)
STUB_ERR(ibv_cmd_alloc_dm)
STUB_ERR(ibv_cmd_alloc_mw)
STUB_ERR(ibv_cmd_alloc_pd)
STUB_ERR(ibv_cmd_attach_mcast)
STUB_ERR(ibv_cmd_close_xrcd)
STUB_ERR(ibv_cmd_create_ah)
STUB_ERR(ibv_cmd_create_counters)
STUB_ERR(ibv_cmd_create_cq)
STUB_ERR(ibv_cmd_create_cq_ex)
STUB_ERR(ibv_cmd_create_flow)
STUB_ERR(ibv_cmd_create_flow_action_esp)
STUB_ERR(ibv_cmd_create_qp)
STUB_ERR(ibv_cmd_create_qp_ex)
STUB_ERR(ibv_cmd_create_qp_ex2)
STUB_ERR(ibv_cmd_create_rwq_ind_table)
STUB_ERR(ibv_cmd_create_srq)
STUB_ERR(ibv_cmd_create_srq_ex)
STUB_ERR(ibv_cmd_create_wq)
STUB_ERR(ibv_cmd_dealloc_mw)
STUB_ERR(ibv_cmd_dealloc_pd)
STUB_ERR(ibv_cmd_dereg_mr)
STUB_ERR(ibv_cmd_destroy_ah)
STUB_ERR(ibv_cmd_destroy_counters)
STUB_ERR(ibv_cmd_destroy_cq)
STUB_ERR(ibv_cmd_destroy_flow)
STUB_ERR(ibv_cmd_destroy_flow_action)
STUB_ERR(ibv_cmd_destroy_qp)
STUB_ERR(ibv_cmd_destroy_rwq_ind_table)
STUB_ERR(ibv_cmd_destroy_srq)
STUB_ERR(ibv_cmd_destroy_wq)
STUB_ERR(ibv_cmd_detach_mcast)
STUB_ERR(ibv_cmd_free_dm)
STUB_ERR(ibv_cmd_get_context)
STUB_ERR(ibv_cmd_modify_cq)
STUB_ERR(ibv_cmd_modify_flow_action_esp)
STUB_ERR(ibv_cmd_modify_qp)
STUB_ERR(ibv_cmd_modify_qp_ex)
STUB_ERR(ibv_cmd_modify_srq)
STUB_ERR(ibv_cmd_modify_wq)
STUB_ERR(ibv_cmd_open_qp)
STUB_ERR(ibv_cmd_open_xrcd)
STUB_ERR(ibv_cmd_query_context)
STUB_ERR(ibv_cmd_query_device_any)
STUB_ERR(ibv_cmd_query_mr)
STUB_ERR(ibv_cmd_query_port)
STUB_ERR(ibv_cmd_query_qp)
STUB_ERR(ibv_cmd_query_srq)
STUB_ERR(ibv_cmd_read_counters)
STUB_ERR(ibv_cmd_reg_dm_mr)
STUB_ERR(ibv_cmd_reg_dmabuf_mr)
STUB_ERR(ibv_cmd_reg_mr)
STUB_ERR(ibv_cmd_rereg_mr)
STUB_ERR(ibv_cmd_resize_cq)
