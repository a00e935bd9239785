// SPDX-License-Identifier: BSD-2-Clause
/* ubperf's in-band control messages: the application bytes of tp_hello packets. */
#include "ubperf/ctl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ubperf_wire.h"

int ctl_parse_addr(const char *s, uint8_t *ver, uint8_t ip[16])
{
	memset(ip, 0, 16);
	if (inet_pton(AF_INET, s, ip) == 1) {
		*ver = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip) == 1) {
		*ver = 6;
		return 0;
	}
	return -1;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* The structs' words are the wire's, in its order: the last of each where the wire has it. */
_Static_assert(offsetof(struct ctl_done, verified) - offsetof(struct ctl_done, failed) ==
	       UBPF_DONE_VERIFIED - UBPF_DONE_FAILED, "struct ctl_done and UBPF_DONE_* differ");
_Static_assert(sizeof(struct ctl_done) == UBPF_DONE_LEN - UBPF_DONE_FAILED,
	       "struct ctl_done and UBPF_DONE_LEN differ");
_Static_assert(offsetof(struct ctl_run, lb) - offsetof(struct ctl_run, mode) ==
	       UBPF_RUN_LB - UBPF_RUN_MODE, "struct ctl_run and UBPF_RUN_* differ");

/* The words of each kind's body, in the order of headers/ubperf_wire.h. */
static size_t body_words(const struct ctl_msg *m, bool is_reply, uint32_t **w)
{
	struct ctl_msg *x = (struct ctl_msg *)m;

	if (m->kind == CTL_DONE) {
		*w = &x->u.done.failed;
		return (UBPF_DONE_LEN - UBPF_OFF_BODY) / 4;
	}
	if (is_reply) {
		*w = &x->u.ans.status;
		return (UBPF_ANS_PATH_VER - UBPF_OFF_BODY) / 4;
	}
	*w = &x->u.run.mode;
	return (UBPF_RUN_LEN - UBPF_OFF_BODY) / 4;
}

size_t ctl_encode(const struct ctl_msg *m, bool is_reply, uint8_t *out, size_t cap)
{
	size_t n, len;
	uint32_t *w;

	n = body_words(m, is_reply, &w);
	len = m->kind == CTL_DONE ? UBPF_DONE_LEN : is_reply ? UBPF_ANS_LEN : UBPF_RUN_LEN;
	if (cap < len)
		return 0;
	memset(out, 0, len);
	put32(out + UBPF_OFF_MAGIC, UBPERF_MAGIC);
	put32(out + UBPF_OFF_KIND, m->kind);
	put32(out + UBPF_OFF_RUN, m->run_id);
	put32(out + UBPF_OFF_INDEX, m->index);
	for (size_t i = 0; i < n; i++)
		put32(out + UBPF_OFF_BODY + 4 * i, w[i]);
	if (m->kind == CTL_SETUP && is_reply) {
		out[UBPF_ANS_PATH_VER] = m->u.ans.path.ver;
		memcpy(out + UBPF_ANS_PATH_IP, m->u.ans.path.ip, 16);
		put32(out + UBPF_ANS_TOKEN_VALUE, m->u.ans.token_value);
		out[UBPF_ANS_RX_RANGE] = (uint8_t)(31 - __builtin_clz(m->u.ans.rx_range | 1));
		out[UBPF_ANS_MTU_OWN] = m->u.ans.mtu_default;
	}
	return len;
}

int ctl_decode(const uint8_t *in, size_t len, bool is_reply, struct ctl_msg *m)
{
	size_t n, want;
	uint32_t *w;

	memset(m, 0, sizeof(*m));
	if (len < UBPF_OFF_BODY || get32(in + UBPF_OFF_MAGIC) != UBPERF_MAGIC)
		return -EINVAL;
	m->magic = UBPERF_MAGIC;
	m->kind = get32(in + UBPF_OFF_KIND);
	m->run_id = get32(in + UBPF_OFF_RUN);
	m->index = get32(in + UBPF_OFF_INDEX);
	if (m->kind != CTL_SETUP && m->kind != CTL_DONE)
		return -EINVAL;
	want = m->kind == CTL_DONE ? UBPF_DONE_LEN : is_reply ? UBPF_ANS_LEN : UBPF_RUN_LEN;
	if (len != want)
		return -EINVAL;
	n = body_words(m, is_reply, &w);
	for (size_t i = 0; i < n; i++)
		w[i] = get32(in + UBPF_OFF_BODY + 4 * i);
	if (m->kind == CTL_SETUP && is_reply) {
		m->u.ans.path.ver = in[UBPF_ANS_PATH_VER];
		memcpy(m->u.ans.path.ip, in + UBPF_ANS_PATH_IP, 16);
		m->u.ans.token_value = get32(in + UBPF_ANS_TOKEN_VALUE);
		/* an older server's pad byte, or no range we know: the default */
		m->u.ans.rx_range = in[UBPF_ANS_RX_RANGE] >= 8 && in[UBPF_ANS_RX_RANGE] <= 11 ?
				    1u << in[UBPF_ANS_RX_RANGE] : TP_OOO_RANGE_DEFAULT;
		m->u.ans.mtu_default = in[UBPF_ANS_MTU_OWN] == 1;
	}
	return 0;
}
