/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubxdp's URMA: the types of the API (urma_api.h).
 *
 * Type, field and constant names follow openEuler UMDK's public liburma API
 * (MIT) so that applications compile unchanged; the layout is this
 * library's (source, not binary, compatibility). Fields marked "not used"
 * are accepted as zero; a value ubxdp cannot honour is refused with
 * URMA_EINVAL or URMA_ENOPERM (docs/URMA.md lists which).
 */
#ifndef URMA_TYPES_H
#define URMA_TYPES_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#ifndef __cplusplus
#include <stdatomic.h>
#else
#include <atomic>
#endif
#include <sys/socket.h>
#include <arpa/inet.h>

#include "urma_opcode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define URMA_GET_VERSION(a, b) (((a) << 16) + ((b) > 65535 ? 65535 : (b)))
#define URMA_API_VERSION URMA_GET_VERSION(0, 9)
#define MAX_PORT_CNT 8
#define URMA_MAX_JETTY_IN_JETTY_GRP 32U
#define URMA_MAX_NAME 64
#define URMA_MAX_PATH 4096
#define URMA_EID_SIZE 16
#define URMA_IPV4_MAP_IPV6_PREFIX 0x0000ffff
#define URMA_MAX_EID_CNT 1024
#define URMA_EID_STR_LEN 39
#define URMA_MAX_DEV_NAME 64
#define URMA_GUID_SIZE 16
#define URMA_IP_ADDR_BYTES 16
#define URMA_MAC_BYTES 6
#define URMA_SEG_TOKEN_ID_INVALID 0xffffffff

/* printf an EID as eight groups of four hex digits. */
#define EID_FMT "%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x:%2.2x%2.2x"
#define EID_RAW_ARGS(eid) (eid)[0], (eid)[1], (eid)[2], (eid)[3], (eid)[4], (eid)[5], (eid)[6], \
	(eid)[7], (eid)[8], (eid)[9], (eid)[10], (eid)[11], (eid)[12], (eid)[13], (eid)[14], (eid)[15]
#define EID_ARGS(eid) EID_RAW_ARGS((eid).raw)

typedef struct urma_init_attr {
	uint64_t token;		/* not used */
	uint32_t uasid;		/* this process's UASID; 0: one is chosen */
} urma_init_attr_t;

/* ---- devices -------------------------------------------------------------- */

typedef enum urma_mtu {
	URMA_MTU_256 = 1,
	URMA_MTU_512,
	URMA_MTU_1024,
	URMA_MTU_2048,
	URMA_MTU_4096,
	URMA_MTU_8192,
} urma_mtu_t;

typedef enum urma_port_state {
	URMA_PORT_NOP = 0,
	URMA_PORT_DOWN,
	URMA_PORT_INIT,
	URMA_PORT_ARMED,
	URMA_PORT_ACTIVE,
	URMA_PORT_ACTIVE_DEFER,
} urma_port_state_t;

typedef enum urma_speed {
	URMA_SP_10M = 0,
	URMA_SP_100M,
	URMA_SP_1G,
	URMA_SP_2_5G,
	URMA_SP_5G,
	URMA_SP_10G,
	URMA_SP_14G,
	URMA_SP_25G,
	URMA_SP_40G,
	URMA_SP_50G,
	URMA_SP_100G,
	URMA_SP_200G,
	URMA_SP_400G,
	URMA_SP_800G,
} urma_speed_t;

typedef enum urma_link_width {
	URMA_LINK_X1 = 0x1,
	URMA_LINK_X2 = 0x1 << 1,
	URMA_LINK_X4 = 0x1 << 2,
	URMA_LINK_X8 = 0x1 << 3,
	URMA_LINK_X16 = 0x1 << 4,
	URMA_LINK_X32 = 0x1 << 5,
} urma_link_width_t;

/* An entity's address, network byte order. ubxdp: the device's IP address,
 * IPv4 as an IPv4-mapped IPv6 address (::ffff:a.b.c.d), as UBoE carries it. */
typedef union urma_eid {
	uint8_t raw[URMA_EID_SIZE];
	struct {
		uint64_t reserved;	/* 0 for IPv4 */
		uint32_t prefix;	/* htonl(URMA_IPV4_MAP_IPV6_PREFIX) for IPv4 */
		uint32_t addr;		/* the IPv4 address */
	} in4;
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} in6;
} urma_eid_t;

/* IPv4 address (host order) to its EID; text (IPv6 or IPv4 notation) to an EID (0 or -1). */
void urma_u32_to_eid(uint32_t ipv4, urma_eid_t *eid);
int urma_str_to_eid(const char *buf, urma_eid_t *eid);

typedef struct urma_ref {
#ifndef __cplusplus
	atomic_ulong atomic_cnt;
#else
	std::atomic_ulong atomic_cnt;
#endif
} urma_ref_t;

typedef struct urma_port_attr {
	urma_mtu_t max_mtu;
	urma_port_state_t state;
	urma_link_width_t active_width;
	urma_speed_t active_speed;
	urma_mtu_t active_mtu;
} urma_port_attr_t;

typedef union urma_device_feature {
	struct {
		uint32_t oor : 1;
		uint32_t jfc_per_wr : 1;
		uint32_t stride_op : 1;
		uint32_t load_store_op : 1;
		uint32_t non_pin : 1;
		uint32_t pmem : 1;
		uint32_t jfc_inline : 1;
		uint32_t spray_en : 1;
		uint32_t selective_retrans : 1;
		uint32_t live_migrate : 1;
		uint32_t dca : 1;
		uint32_t jetty_grp : 1;
		uint32_t error_suspend : 1;
		uint32_t outorder_comp : 1;
		uint32_t mn : 1;
		uint32_t clan : 1;
		uint32_t muti_seg_per_token_id : 1;
		uint32_t reserved : 15;
	} bs;
	uint32_t value;
} urma_device_feature_t;

typedef union urma_atomic_feature {
	struct {
		uint32_t cas : 1;
		uint32_t swap : 1;
		uint32_t fetch_and_add : 1;
		uint32_t fetch_and_sub : 1;
		uint32_t fetch_and_and : 1;
		uint32_t fetch_and_or : 1;
		uint32_t fetch_and_xor : 1;
		uint32_t reserved : 25;
	} bs;
	uint32_t value;
} urma_atomic_feature_t;

typedef enum urma_sub_trans_mode_cap {
	URMA_RC_TP_DST_ORDERING = 0x1,
	URMA_RC_TA_DST_ORDERING = 0x1 << 1,
	URMA_RC_USER_TP = 0x1 << 2,
} urma_sub_trans_mode_cap_t;

typedef union urma_order_type_cap {
	struct {
		uint32_t ot : 1;
		uint32_t oi : 1;
		uint32_t ol : 1;
		uint32_t no : 1;
		uint32_t reserved : 27;
	} bs;
	uint32_t value;
} urma_order_type_cap_t;

typedef union urma_tp_type_cap {
	struct {
		uint32_t rtp : 1;
		uint32_t ctp : 1;
		uint32_t utp : 1;
		uint32_t reserved : 29;
	} bs;
	uint32_t value;
} urma_tp_type_cap_t;

typedef union urma_tp_feature {
	struct {
		uint32_t rm_multi_path : 1;
		uint32_t rc_multi_path : 1;
		uint32_t reserved : 28;
	} bs;
	uint32_t value;
} urma_tp_feature_t;

/* What a device can do (urma_query_device). */
typedef struct urma_device_cap {
	urma_device_feature_t feature;
	uint32_t max_jfc;
	uint32_t max_jfs;
	uint32_t max_jfr;
	uint32_t max_jetty;
	uint32_t max_jetty_grp;
	uint32_t max_jetty_in_jetty_grp;
	uint32_t max_jfc_depth;
	uint32_t max_jfs_depth;
	uint32_t max_jfr_depth;
	uint32_t max_jfs_inline_len;
	uint32_t max_jfs_sge;
	uint32_t max_jfs_rsge;
	uint32_t max_jfr_sge;
	uint64_t max_msg_size;
	uint32_t max_read_size;
	uint32_t max_write_size;
	uint32_t max_cas_size;
	uint32_t max_swap_size;
	uint32_t max_fetch_and_add_size;
	uint32_t max_fetch_and_sub_size;
	uint32_t max_fetch_and_and_size;
	uint32_t max_fetch_and_or_size;
	uint32_t max_fetch_and_xor_size;
	urma_atomic_feature_t atomic_feat;
	uint16_t trans_mode;		/* URMA_TM_* bits */
	uint16_t sub_trans_mode_cap;
	uint16_t congestion_ctrl_alg;
	uint32_t ceq_cnt;
	uint32_t max_tp_in_tpg;
	uint32_t max_eid_cnt;
	uint64_t page_size_cap;
	uint32_t max_oor_cnt;
	uint32_t mn;
	uint32_t max_netaddr_cnt;
	urma_order_type_cap_t rm_order_cap;
	urma_order_type_cap_t rc_order_cap;
	urma_tp_type_cap_t rm_tp_cap;
	urma_tp_type_cap_t rc_tp_cap;
	urma_tp_type_cap_t um_tp_cap;
	urma_tp_feature_t tp_feature;
} urma_device_cap_t;

typedef struct urma_guid {
	uint8_t raw[URMA_GUID_SIZE];
} urma_guid_t;

typedef struct urma_device_attr {
	urma_guid_t guid;
	urma_device_cap_t dev_cap;
	uint8_t port_cnt;
	struct urma_port_attr port_attr[MAX_PORT_CNT];
	uint32_t reserved_jetty_id_min;
	uint32_t reserved_jetty_id_max;
} urma_device_attr_t;

typedef struct urma_token {
	uint32_t token;
} urma_token_t;

struct urma_sysfs_dev;
struct urma_ops;
struct urma_provider_ops;

typedef enum urma_transport_type {
	URMA_TRANSPORT_INVALID = -1,
	URMA_TRANSPORT_UB = 0,
	URMA_TRANSPORT_MAX
} urma_transport_type_t;

typedef enum urma_transport_mode {
	URMA_TM_RM = 0x1,	/* reliable message */
	URMA_TM_RC = 0x1 << 1,	/* reliable connection */
	URMA_TM_UM = 0x1 << 2,	/* unreliable message */
} urma_transport_mode_t;

typedef enum urma_tp_cc_alg {
	URMA_TP_CC_NONE = 0,
	URMA_TP_CC_DCQCN,
	URMA_TP_CC_DCQCN_AND_NETWORK_CC,
	URMA_TP_CC_LDCP,
	URMA_TP_CC_LDCP_AND_CAQM,
	URMA_TP_CC_LDCP_AND_OPEN_CC,
	URMA_TP_CC_HC3,
	URMA_TP_CC_DIP,
	URMA_TP_CC_ACC,
	URMA_TP_CC_NUM,
} urma_tp_cc_alg_t;

typedef enum urma_congestion_ctrl_alg {
	URMA_CC_NONE = 0x1 << URMA_TP_CC_NONE,
	URMA_CC_DCQCN = 0x1 << URMA_TP_CC_DCQCN,
	URMA_CC_DCQCN_AND_NETWORK_CC = 0x1 << URMA_TP_CC_DCQCN_AND_NETWORK_CC,
	URMA_CC_LDCP = 0x1 << URMA_TP_CC_LDCP,
	URMA_CC_LDCP_AND_CAQM = 0x1 << URMA_TP_CC_LDCP_AND_CAQM,
	URMA_CC_LDCP_AND_OPEN_CC = 0x1 << URMA_TP_CC_LDCP_AND_OPEN_CC,
	URMA_CC_HC3 = 0x1 << URMA_TP_CC_HC3,
	URMA_CC_DIP = 0x1 << URMA_TP_CC_DIP,
	URMA_CC_ACC = 0x1 << URMA_TP_CC_ACC
} urma_congestion_ctrl_alg_t;

/* A URMA device: with ubxdp, a network device the endpoint serves. */
typedef struct urma_device {
	char name[URMA_MAX_NAME];
	char path[URMA_MAX_PATH];	/* /sys/class/net/NAME */
	urma_transport_type_t type;	/* URMA_TRANSPORT_UB */
	struct urma_provider_ops *ops;	/* not used */
	struct urma_sysfs_dev *sysfs_dev;	/* the library's */
} urma_device_t;

typedef enum urma_context_opt_name {
	URMA_OPT_AGGR_MODE,
} urma_opt_name_t;

typedef enum urma_context_aggr_mode {
	URMA_AGGR_MODE_STANDALONE,
	URMA_AGGR_MODE_ACTIVE_BACKUP,
	URMA_AGGR_MODE_BALANCE,
} urma_context_aggr_mode_t;

typedef struct urma_context {
	struct urma_device *dev;
	struct urma_ops *ops;		/* not used */
	int dev_fd;			/* -1 */
	int async_fd;			/* -1 */
	pthread_mutex_t mutex;
	urma_eid_t eid;			/* the EID chosen at creation */
	uint32_t eid_index;
	uint32_t uasid;			/* this process's */
	struct urma_ref ref;
	urma_context_aggr_mode_t aggr_mode;
} urma_context_t;

typedef struct urma_eid_info {
	urma_eid_t eid;
	uint32_t eid_index;
} urma_eid_info_t;

/* ---- completion ----------------------------------------------------------- */

typedef struct urma_jfce_cfg {
	uint32_t depth;
	uint64_t user_ctx;
} urma_jfce_cfg_t;

/* A completion event channel. fd is readable (poll, epoll) when an armed JFC
 * of this JFCE has had a completion; urma_wait_jfc() says which. */
typedef struct urma_jfce {
	urma_context_t *urma_ctx;
	int fd;
	struct urma_ref ref;
} urma_jfce_t;

typedef union urma_jfc_flag {
	struct {
		uint32_t lock_free : 1;
		uint32_t jfc_inline : 1;
		uint32_t reserved : 30;
	} bs;
	uint32_t value;
} urma_jfc_flag_t;

typedef struct urma_jfc_cfg {
	uint32_t depth;		/* completion records it holds */
	urma_jfc_flag_t flag;
	uint32_t ceqn;		/* not used */
	urma_jfce_t *jfce;	/* NULL: no events, polling only */
	uint64_t user_ctx;
} urma_jfc_cfg_t;

typedef enum urma_jfc_attr_mask {
	JFC_MODERATE_COUNT = 0x1,
	JFC_MODERATE_PERIOD = 0x1 << 1
} urma_jfc_attr_mask_t;

typedef struct urma_jfc_attr {
	uint32_t mask;
	uint16_t moderate_count;
	uint16_t moderate_period;
} urma_jfc_attr_t;

/* A jetty's (JFS's, JFR's) name on the network: its entity, process, number. */
typedef struct urma_jetty_id {
	urma_eid_t eid;
	uint32_t uasid;
	uint32_t id;
} urma_jetty_id_t;

typedef struct urma_jetty_id urma_jfs_id_t;
typedef struct urma_jetty_id urma_jfr_id_t;
typedef struct urma_jetty_id urma_jfc_id_t;

typedef struct urma_jfc {
	urma_context_t *urma_ctx;
	urma_jfc_id_t jfc_id;
	urma_jfc_cfg_t jfc_cfg;
	uint64_t handle;
	pthread_mutex_t event_mutex;
	pthread_cond_t event_cond;
	uint32_t comp_events_acked;
	uint32_t async_events_acked;
} urma_jfc_t;

#define URMA_SUB_TRANS_MODE_TA_DST_ORDERING_ENABLE 0x1
#define URMA_SUB_TRANS_MODE_USER_TP 0x2

/* flag.bs.order_type: which ordering the transaction layer keeps. */
typedef enum urma_order_type {
	URMA_DEF_ORDER,
	URMA_OT,	/* target ordering */
	URMA_OI,	/* initiator ordering */
	URMA_OL,	/* lower layer ordering */
	URMA_NO		/* unreliable, no ordering */
} urma_order_type_t;

/* ---- queues --------------------------------------------------------------- */

typedef union urma_jfs_flag {
	struct {
		uint32_t lock_free : 1;
		uint32_t error_suspend : 1;
		uint32_t outorder_comp : 1;
		uint32_t order_type : 8;	/* urma_order_type_t */
		uint32_t multi_path : 1;
		uint32_t ctp_rc_mul_path_mode : 1;
		uint32_t reserved : 19;
	} bs;
	uint32_t value;
} urma_jfs_flag_t;

typedef struct urma_jfs_cfg {
	uint32_t depth;		/* work requests outstanding */
	urma_jfs_flag_t flag;
	urma_transport_mode_t trans_mode;
	uint8_t priority;
	uint8_t max_sge;
	uint8_t max_rsge;
	uint32_t max_inline_data;
	uint8_t rnr_retry;	/* 0..7 */
	uint8_t err_timeout;	/* 0..31: 4.096 us x 2^err_timeout until a silent peer is an error */
	urma_jfc_t *jfc;
	uint64_t user_ctx;
} urma_jfs_cfg_t;

typedef struct urma_jfs {
	urma_context_t *urma_ctx;
	urma_jfs_id_t jfs_id;
	urma_jfs_cfg_t jfs_cfg;
	uint64_t handle;
	pthread_mutex_t event_mutex;
	pthread_cond_t event_cond;
	uint32_t async_events_acked;
} urma_jfs_t;

typedef enum urma_jfs_attr_mask {
	JFS_STATE = 0x1
} urma_jfs_attr_mask_t;

typedef urma_jetty_state_t urma_jfs_state_t;

typedef struct urma_jfs_attr {
	uint32_t mask;
	urma_jfs_state_t state;
} urma_jfs_attr_t;

typedef union urma_jfr_flag {
	struct {
		uint32_t token_policy : 3;	/* URMA_TOKEN_* */
		uint32_t tag_matching : 1;
		uint32_t lock_free : 1;
		uint32_t order_type : 8;
		uint32_t reserved : 19;
	} bs;
	uint32_t value;
} urma_jfr_flag_t;

typedef struct urma_jfr_cfg {
	uint32_t id;		/* 0: one is chosen */
	uint32_t depth;
	urma_jfr_flag_t flag;
	urma_transport_mode_t trans_mode;
	uint8_t max_sge;
	uint8_t min_rnr_timer;	/* 0..31: how long a sender is asked to wait on RNR */
	urma_jfc_t *jfc;
	urma_token_t token_value;	/* what an importer must present */
	uint64_t user_ctx;
} urma_jfr_cfg_t;

typedef enum urma_jfr_attr_mask {
	JFR_RX_THRESHOLD = 0x1,
	JFR_STATE = 0x1 << 1
} urma_jfr_attr_mask_t;

typedef struct urma_jfr_attr {
	uint32_t mask;
	uint32_t rx_threshold;
	urma_jfr_state_t state;
} urma_jfr_attr_t;

typedef struct urma_jfr {
	urma_context_t *urma_ctx;
	urma_jfr_id_t jfr_id;
	urma_jfr_cfg_t jfr_cfg;
	uint64_t handle;
	pthread_mutex_t event_mutex;
	pthread_cond_t event_cond;
	uint32_t async_events_acked;
} urma_jfr_t;

typedef union urma_import_jetty_flag {
	struct {
		uint32_t token_policy : 3;
		uint32_t order_type : 8;
		uint32_t share_tp : 1;
		uint32_t reserved : 20;
	} bs;
	uint32_t value;
} urma_import_jetty_flag_t;

typedef enum urma_tp_type {
	URMA_RTP,
	URMA_CTP,
	URMA_UTP
} urma_tp_type_t;

typedef struct urma_rjfr {
	urma_jfr_id_t jfr_id;
	urma_transport_mode_t trans_mode;
	urma_import_jetty_flag_t flag;
	urma_tp_type_t tp_type;
} urma_rjfr_t;

typedef struct urma_tp {
	uint32_t tpn;
} urma_tp_t;

typedef union urma_jetty_flag {
	struct {
		uint32_t share_jfr : 1;	/* URMA_SHARE_JFR: receive on shared.jfr */
		uint32_t reserved : 31;
	} bs;
	uint32_t value;
} urma_jetty_flag_t;

typedef struct urma_jetty_grp urma_jetty_grp_t;

typedef struct urma_jetty_cfg {
	uint32_t id;		/* 0: one is chosen */
	urma_jetty_flag_t flag;
	urma_jfs_cfg_t jfs_cfg;
	union {
		struct {
			urma_jfr_t *jfr;
			urma_jfc_t *jfc;	/* NULL: the JFR's */
		} shared;
		urma_jfr_cfg_t *jfr_cfg;	/* without share_jfr: a JFR of its own */
	};
	urma_jetty_grp_t *jetty_grp;	/* not supported: NULL */
	uint64_t user_ctx;
} urma_jetty_cfg_t;

typedef enum urma_jetty_grp_policy {
	URMA_JETTY_GRP_POLICY_RR = 0,
	URMA_JETTY_GRP_POLICY_HASH_HINT = 1
} urma_jetty_grp_policy_t;

typedef enum urma_target_type {
	URMA_JFR = 0,
	URMA_JETTY,
	URMA_JETTY_GROUP
} urma_target_type_t;

typedef struct urma_rjetty {
	urma_jetty_id_t jetty_id;
	urma_transport_mode_t trans_mode;
	urma_jetty_grp_policy_t policy;
	urma_target_type_t type;
	urma_import_jetty_flag_t flag;
	urma_tp_type_t tp_type;
} urma_rjetty_t;

/* An imported remote JFR or jetty. */
typedef struct urma_target_jetty {
	urma_context_t *urma_ctx;
	urma_jetty_id_t id;
	uint64_t handle;
	urma_transport_mode_t trans_mode;
	urma_tp_t tp;
	urma_target_type_t type;
	urma_import_jetty_flag_t flag;
	urma_jetty_grp_policy_t policy;
	urma_tp_type_t tp_type;
} urma_target_jetty_t;

typedef enum urma_jetty_attr_mask {
	JETTY_RX_THRESHOLD = 0x1,
	JETTY_STATE = 0x1 << 1
} urma_jetty_attr_mask_t;

typedef struct urma_jetty_attr {
	uint32_t mask;
	uint32_t rx_threshold;
	urma_jetty_state_t state;
} urma_jetty_attr_t;

typedef struct urma_jetty {
	urma_context_t *urma_ctx;
	urma_jetty_id_t jetty_id;
	urma_target_jetty_t *remote_jetty;	/* RC: the bound one */
	urma_jetty_cfg_t jetty_cfg;
	uint64_t handle;
	pthread_mutex_t event_mutex;
	pthread_cond_t event_cond;
	uint32_t async_events_acked;
} urma_jetty_t;

/* ---- memory --------------------------------------------------------------- */

typedef struct urma_ubva {
	urma_eid_t eid;
	uint32_t uasid;
	uint64_t va;
} __attribute__((packed)) urma_ubva_t;

typedef union urma_reg_seg_flag {
	struct {
		uint32_t token_policy : 3;
		uint32_t cacheable : 1;
		uint32_t dsva : 1;
		uint32_t access : 6;	/* URMA_ACCESS_* */
		uint32_t non_pin : 1;
		uint32_t user_iova : 1;
		uint32_t token_id_valid : 1;
		uint32_t reserved : 18;
	} bs;
	uint32_t value;
} urma_reg_seg_flag_t;

typedef union urma_seg_attr {
	struct {
		uint32_t token_policy : 3;
		uint32_t cacheable : 1;
		uint32_t dsva : 1;
		uint32_t access : 6;
		uint32_t non_pin : 1;
		uint32_t user_iova : 1;
		uint32_t user_token_id : 1;
		uint32_t reserved : 18;
	} bs;
	uint32_t value;
} urma_seg_attr_t;

typedef union urma_import_seg_flag {
	struct {
		uint32_t cacheable : 1;
		uint32_t access : 6;
		uint32_t mapping : 1;	/* URMA_SEG_NOMAP only */
		uint32_t reserved : 24;
	} bs;
	uint32_t value;
} urma_import_seg_flag_t;

typedef union urma_token_id_flag {
	struct {
		uint32_t multi_seg : 1;
		uint32_t reserved : 31;
	} bs;
	uint32_t value;
} urma_token_id_flag_t;

typedef struct urma_token_id {
	urma_context_t *urma_ctx;
	uint32_t token_id;
	uint64_t handle;
	urma_ref_t ref;
	urma_token_id_flag_t flag;
} urma_token_id_t;

typedef struct urma_seg_cfg {
	uint64_t va;		/* page aligned */
	uint64_t len;
	urma_token_id_t *token_id;	/* NULL: one is allocated */
	urma_token_t token_value;	/* what remote accesses must present */
	urma_reg_seg_flag_t flag;
	uint64_t user_ctx;
	uint64_t iova;		/* not used: 0 */
} urma_seg_cfg_t;

/* What the owner of a segment tells the importers (out of band). */
typedef struct urma_seg {
	urma_ubva_t ubva;
	uint64_t len;
	urma_seg_attr_t attr;
	uint32_t token_id;
} urma_seg_t;

typedef struct urma_target_seg {
	urma_seg_t seg;
	uint64_t user_ctx;
	uint64_t mva;
	urma_context_t *urma_ctx;
	urma_token_id_t *token_id;	/* registered: its token ID; imported: NULL */
	uint64_t handle;
} urma_target_seg_t;

typedef struct urma_user_target_seg {
	urma_seg_attr_t attr;
	uint32_t token_id;
	urma_token_t token_value;
} urma_user_tseg_t;

/* ---- work requests and completions --------------------------------------- */

typedef struct urma_sge {
	uint64_t addr;
	uint32_t len;
	urma_target_seg_t *tseg;	/* local: registered; remote: imported */
	urma_user_tseg_t *user_tseg;	/* not supported: NULL */
} urma_sge_t;

typedef struct urma_sg {
	urma_sge_t *sge;
	uint32_t num_sge;
} urma_sg_t;

typedef union urma_jfs_wr_flag {
	struct {
		uint32_t place_order : 2;	/* urma_place_order_t */
		uint32_t comp_order : 1;
		uint32_t fence : 1;		/* wait for earlier Reads and atomics */
		uint32_t solicited_enable : 1;
		uint32_t complete_enable : 1;	/* a completion record on success */
		uint32_t inline_flag : 1;	/* the data is copied at posting */
		uint32_t reserved : 25;
	} bs;
	uint32_t value;
} urma_jfs_wr_flag_t;

typedef union urma_jfr_wr_flag {
	struct {
		uint32_t complete_type : 1;
		uint32_t reserved : 31;
	} bs;
	uint32_t value;
} urma_jfr_wr_flag_t;

typedef struct urma_rw_wr {
	urma_sg_t src;		/* Write: local SGEs; Read: the one remote SGE */
	urma_sg_t dst;		/* Write: the one remote SGE; Read: local SGEs */
	uint8_t target_hint;
	uint64_t notify_data;	/* Write with immediate: the immediate data */
} urma_rw_wr_t;

typedef struct urma_send_wr {
	urma_sg_t src;
	uint8_t target_hint;
	uint64_t imm_data;	/* Send with immediate */
	urma_target_seg_t *tseg;	/* Send with invalidate: not supported */
} urma_send_wr_t;

typedef struct urma_cas_wr {
	urma_sge_t *dst;	/* the remote word (len: its size) */
	urma_sge_t *src;	/* where the old value goes */
	union {
		uint64_t cmp_data;
		uint64_t cmp_addr;
	};
	union {
		uint64_t swap_data;
		uint64_t swap_addr;
	};
} urma_cas_wr_t;

typedef struct urma_faa_wr {
	urma_sge_t *dst;
	urma_sge_t *src;
	union {
		uint64_t operand;
		uint64_t operand_addr;
	};
} urma_faa_wr_t;

typedef struct urma_jfs_wr {
	urma_opcode_t opcode;
	urma_jfs_wr_flag_t flag;
	urma_target_jetty_t *tjetty;
	uint64_t user_ctx;
	union {
		urma_rw_wr_t rw;
		urma_send_wr_t send;
		urma_cas_wr_t cas;
		urma_faa_wr_t faa;
	};
	struct urma_jfs_wr *next;
} urma_jfs_wr_t;

typedef struct urma_jfr_wr {
	urma_sg_t src;
	uint64_t user_ctx;
	struct urma_jfr_wr *next;
} urma_jfr_wr_t;

typedef union urma_cr_flag {
	struct {
		uint8_t s_r : 1;		/* 0: a send-side record, 1: a receive */
		uint8_t jetty : 1;		/* local_id names a jetty (else a JFS or JFR) */
		uint8_t suspend_done : 1;
		uint8_t flush_err_done : 1;
		uint8_t reserved : 4;
	} bs;
	uint8_t value;
} urma_cr_flag_t;

typedef struct urma_cr_token {
	uint32_t token_id;
	urma_token_t token_value;
} urma_cr_token_t;

/* A completion record (urma_poll_jfc). */
typedef struct urma_cr {
	urma_cr_status_t status;
	uint64_t user_ctx;		/* the work request's */
	urma_cr_opcode_t opcode;	/* receive records: what came */
	urma_cr_flag_t flag;
	uint32_t completion_len;	/* bytes moved */
	uint32_t local_id;
	urma_jetty_id_t remote_id;	/* the other side's jetty */
	union {
		uint64_t imm_data;
		urma_cr_token_t invalid_token;
	};
	uint32_t tpn;
	uintptr_t user_data;		/* the local urma_jetty_t / urma_jfs_t / urma_jfr_t */
} urma_cr_t;

typedef enum urma_vlog_level {
	URMA_VLOG_LEVEL_EMERG = 0,
	URMA_VLOG_LEVEL_ALERT = 1,
	URMA_VLOG_LEVEL_CRIT = 2,
	URMA_VLOG_LEVEL_ERR = 3,
	URMA_VLOG_LEVEL_WARNING = 4,
	URMA_VLOG_LEVEL_NOTICE = 5,
	URMA_VLOG_LEVEL_INFO = 6,
	URMA_VLOG_LEVEL_DEBUG = 7,
	URMA_VLOG_LEVEL_MAX = 8,
} urma_vlog_level_t;

typedef void (*urma_log_cb_t)(int level, char *message);

#ifdef __cplusplus
}
#endif

#endif
