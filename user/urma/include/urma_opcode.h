/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ubxdp's URMA: constants, opcodes and status codes.
 *
 * The names and values follow openEuler UMDK's public liburma API (MIT), so
 * that an application written against liburma compiles unchanged; the text
 * is ubxdp's own. What this implementation supports: docs/URMA.md.
 */
#ifndef URMA_OPCODE_H
#define URMA_OPCODE_H

#include <errno.h>

/* Token policy of a segment, a JFR or an import (flag.bs.token_policy). */
#define URMA_TOKEN_NONE          0
#define URMA_TOKEN_PLAIN_TEXT    1
#define URMA_TOKEN_SIGNED        2
#define URMA_TOKEN_ALL_ENCRYPTED 3
#define URMA_TOKEN_RESERVED      4

#define URMA_TOKEN_ID_INVALID 0
#define URMA_TOKEN_ID_VALID   1

#define URMA_DSVA_DISABLE 0
#define URMA_DSVA_ENABLE  1

#define URMA_NON_CACHEABLE 0
#define URMA_CACHEABLE     1

/* Segment access (flag.bs.access): LOCAL_ONLY refuses every remote access;
 * otherwise each of READ, WRITE and ATOMIC allows that kind of remote access. */
#define URMA_ACCESS_LOCAL_ONLY (0x1 << 0)
#define URMA_ACCESS_READ       (0x1 << 1)
#define URMA_ACCESS_WRITE      (0x1 << 2)
#define URMA_ACCESS_ATOMIC     (0x1 << 3)

#define URMA_LOCAL_MEMORY  0
#define URMA_REMOTE_MEMORY 1

#define URMA_SEG_NOMAP  0
#define URMA_SEG_MAPPED 1

#define URMA_ADDR_TYPE_MVA  0
#define URMA_ADDR_TYPE_UBVA 1

/* Work request flags (urma_jfs_wr_flag_t). */
#define URMA_COMPLETE_ENABLE  1
#define URMA_COMPLETE_DISABLE 0

#define URMA_COMPLETE_TYPE_JFC 0
#define URMA_COMPLETE_TYPE_CF  1

#define URMA_DEPENDENCY_NONE  0
#define URMA_DEPENDENCY_FIRST 1
#define URMA_DEPENDENCY_DELAY 2

#define URMA_NOTIFY_DISABLE 0
#define URMA_NOTIFY_ENABLE  1

#define URMA_NOTIFY_TYPE_JFC 0
#define URMA_NOTIFY_TYPE_RVA 1

#define URMA_INLINE_DISABLE 0
#define URMA_INLINE_ENABLE  1

#define URMA_SOLICITED_DISABLE 0
#define URMA_SOLICITED_ENABLE  1

#define URMA_FENCE_DISABLE 0
#define URMA_FENCE_ENABLE  1

#define URMA_REGULAR   1
#define URMA_IRREGULAR 0

#define URMA_NO_TAG_MATCHING   0
#define URMA_WITH_TAG_MATCHING 1

#define URMA_NONPOST_LS 0
#define URMA_POST_LS    1

#define URMA_NO_SHARE_JFR 0
#define URMA_SHARE_JFR    1

#define URMA_TYPICAL_RNR_RETRY     7
#define URMA_TYPICAL_ERR_TIMEOUT   17
#define URMA_TYPICAL_MIN_RNR_TIMER 12
#define URMA_MAX_PRIORITY          15

typedef enum urma_place_order {
	URMA_NO_ORDER = 0,
	URMA_RELAX_ORDER,
	URMA_STRONG_ORDER
} urma_place_order_t;

/* Work request opcodes (urma_jfs_wr_t.opcode). */
typedef enum urma_opcode {
	URMA_OPC_WRITE = 0x00,
	URMA_OPC_WRITE_IMM = 0x01,
	URMA_OPC_WRITE_NOTIFY = 0x02,
	URMA_OPC_READ = 0x10,
	URMA_OPC_CAS = 0x20,
	URMA_OPC_SWAP = 0x21,
	URMA_OPC_FADD = 0x22,
	URMA_OPC_FSUB = 0x23,
	URMA_OPC_FAND = 0x24,
	URMA_OPC_FOR = 0x25,
	URMA_OPC_FXOR = 0x26,
	URMA_OPC_SEND = 0x40,
	URMA_OPC_SEND_IMM = 0x41,
	URMA_OPC_SEND_INVALIDATE = 0x42,
	URMA_OPC_NOP = 0x51,
	URMA_OPC_WRITE_ATOMIC = 0x60,
	URMA_OPC_FLUSH_DMA = 0x80,
	URMA_OPC_LAST
} urma_opcode_t;

/* Return codes: 0 or an errno value (URMA_FAIL for the rest). */
typedef int urma_status_t;
#define URMA_SUCCESS     0
#define URMA_EAGAIN      EAGAIN
#define URMA_ENOMEM      ENOMEM
#define URMA_ENOPERM     EPERM
#define URMA_ETIMEOUT    ETIMEDOUT
#define URMA_EINVAL      EINVAL
#define URMA_EEXIST      EEXIST
#define URMA_EINPROGRESS EINPROGRESS
#define URMA_FAIL        0x1000

/* Status of a completion record. */
typedef enum urma_cr_status {
	URMA_CR_SUCCESS = 0,
	URMA_CR_UNSUPPORTED_OPCODE_ERR,
	URMA_CR_LOC_LEN_ERR,
	URMA_CR_LOC_OPERATION_ERR,
	URMA_CR_LOC_ACCESS_ERR,
	URMA_CR_REM_RESP_LEN_ERR,
	URMA_CR_REM_UNSUPPORTED_REQ_ERR,
	URMA_CR_REM_OPERATION_ERR,
	URMA_CR_REM_ACCESS_ABORT_ERR,
	URMA_CR_ACK_TIMEOUT_ERR,
	URMA_CR_RNR_RETRY_CNT_EXC_ERR,
	URMA_CR_WR_FLUSH_ERR,
	URMA_CR_WR_SUSPEND_DONE,
	URMA_CR_WR_FLUSH_ERR_DONE,
	URMA_CR_WR_UNHANDLED,
	URMA_CR_LOC_DATA_POISON,
	URMA_CR_REM_DATA_POISON,
} urma_cr_status_t;

/* What a receive completion received. */
typedef enum urma_cr_opcode {
	URMA_CR_OPC_SEND = 0x00,
	URMA_CR_OPC_SEND_WITH_IMM,
	URMA_CR_OPC_SEND_WITH_INV,
	URMA_CR_OPC_WRITE_WITH_IMM,
	URMA_CR_OPC_FLUSH_WRITE,
} urma_cr_opcode_t;

typedef enum urma_async_event_type {
	URMA_EVENT_JFC_ERR,
	URMA_EVENT_JFS_ERR,
	URMA_EVENT_JFR_ERR,
	URMA_EVENT_JFR_LIMIT,
	URMA_EVENT_JETTY_ERR,
	URMA_EVENT_JETTY_LIMIT,
	URMA_EVENT_JETTY_GRP_ERR,
	URMA_EVENT_PORT_ACTIVE,
	URMA_EVENT_PORT_DOWN,
	URMA_EVENT_DEV_FATAL,
	URMA_EVENT_EID_CHANGE,
	URMA_EVENT_ELR_ERR,
	URMA_EVENT_ELR_DONE
} urma_async_event_type_t;

typedef enum urma_jfc_state {
	URMA_JFC_STATE_INVALID = 0,
	URMA_JFC_STATE_VALID,
	URMA_JFC_STATE_ERROR
} urma_jfc_state_t;

typedef enum urma_jetty_state {
	URMA_JETTY_STATE_RESET = 0,
	URMA_JETTY_STATE_READY,
	URMA_JETTY_STATE_SUSPENDED,
	URMA_JETTY_STATE_ERROR
} urma_jetty_state_t;

typedef enum urma_jfr_state {
	URMA_JFR_STATE_RESET = 0,
	URMA_JFR_STATE_READY,
	URMA_JFR_STATE_ERROR
} urma_jfr_state_t;

#endif
