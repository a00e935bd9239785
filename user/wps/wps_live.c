// SPDX-License-Identifier: BSD-2-Clause
#include "wps/wps_live.h"

#include <string.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>

#define NUD_STATIC	(NUD_PERMANENT | NUD_NOARP)
#define NUD_ASKABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY)

bool wps_nh_alive(const struct wps_nh_seen *s, unsigned probe_ms, unsigned dead_ms, unsigned unanswered_ms)
{
	if (!s->present || !s->has_lladdr)
		return false;
	if (s->state & NUD_STATIC)
		return true;
	if (!(s->state & (NUD_ASKABLE | NUD_PROBE)))
		return false;	/* INCOMPLETE, FAILED, NONE */
	return s->confirmed_ago_ms <= dead_ms || unanswered_ms == WPS_NH_NOT_ASKED ||
	       unanswered_ms < dead_ms - probe_ms;
}

/* Asked after the confirmation, by WPS_NH_CONFIRM_SLACK_MS at least (wps_nh_unanswered). */
static bool asked_after(uint64_t question_ms, uint64_t confirmed_ms)
{
	return question_ms && question_ms > confirmed_ms + WPS_NH_CONFIRM_SLACK_MS;
}

/* From a question (or its due time) to now (or the look's), clamped below WPS_NH_NOT_ASKED. */
static unsigned elapsed(uint64_t now_ms, uint64_t from_ms)
{
	if (now_ms <= from_ms)
		return 0;
	return now_ms - from_ms < WPS_NH_NOT_ASKED ? (unsigned)(now_ms - from_ms) : WPS_NH_NOT_ASKED - 1;
}

unsigned wps_nh_unanswered(uint64_t now_ms, uint64_t question_ms, uint64_t confirmed_ms)
{
	if (!asked_after(question_ms, confirmed_ms))
		return WPS_NH_NOT_ASKED;
	return elapsed(now_ms, question_ms);
}

enum wps_nh_act wps_nh_next(const struct wps_nh_seen *s, unsigned probe_ms, unsigned since_probe_ms)
{
	if (since_probe_ms < probe_ms)
		return WPS_NH_NONE;
	if (!s->present || !s->state || (s->state & NUD_FAILED))
		return WPS_NH_RESOLVE;
	if (s->state & (NUD_STATIC | NUD_INCOMPLETE))
		return WPS_NH_NONE;	/* static, or the kernel is resolving it */
	if (s->confirmed_ago_ms < probe_ms)
		return WPS_NH_NONE;
	return (s->state & NUD_PROBE) ? WPS_NH_REPROBE : WPS_NH_PROBE;
}

/*
 * The silence judged of the first question, or of the later one (first: the
 * first), or WPS_NH_NOT_ASKED: answered. From its due time to the look's;
 * while up, no further than the later question's until that one is a tick old
 * on the clock: a next hop that lost the first answers the later within a
 * tick, which the tick after a late look, sooner, may not see yet.
 */
static unsigned silence(const struct wps_nh_track *tr, const struct wps_nh_when *w, bool first, uint64_t against)
{
	const uint64_t q = first ? tr->question_ms : tr->later_ms, qdue = first ? tr->question_due_ms : tr->later_due_ms;

	if (wps_nh_unanswered(w->t_ms, q, against) == WPS_NH_NOT_ASKED)
		return WPS_NH_NOT_ASKED;
	if (first && tr->up && tr->later_ms && w->t0_ms < tr->later_ms + w->tick_ms)
		return elapsed(tr->later_due_ms, qdue);
	return elapsed(w->due_ms, qdue);
}

enum wps_nh_act wps_nh_look(struct wps_nh_track *tr, const struct wps_nh_seen *seen, const __u8 dmac[6],
			    const struct wps_nh_when *w, unsigned probe_ms, unsigned dead_ms)
{
	const uint64_t ago = seen->confirmed_ago_ms;
	/* The confirmation lies between these: an agent stalled after the kernel's
	 * reply reads t late. Compared at its latest (a stall does not make it
	 * go back) and kept at its earliest (the next look's comparison neither).
	 * Against the question: at its latest while up (errs towards answered),
	 * at its earliest while down, where the latest would take a stall of
	 * probe - slack for an answer; one that answered is alive by its age. */
	const uint64_t latest = w->t_ms > ago ? w->t_ms - ago : 0, earliest = w->t0_ms > ago ? w->t0_ms - ago : 0;
	/* A MAC other than the path's speaks once: a down hop's path keeps the
	 * old one, and would be asked at every look. */
	const bool renewed = seen->has_lladdr && ((memcmp(seen->lladdr, dmac, 6) && memcmp(seen->lladdr, tr->mac, 6)) ||
						  latest + WPS_NH_CONFIRM_SLACK_MS < tr->confirmed_ms);
	const uint64_t since = w->due_ms > tr->asked_ms ? w->due_ms - tr->asked_ms : 0;
	const uint64_t against = tr->up ? latest : earliest;
	unsigned unanswered;
	enum wps_nh_act act;

	tr->confirmed_ms = earliest;
	if (seen->has_lladdr)
		memcpy(tr->mac, seen->lladdr, 6);
	if (renewed && tr->up)
		tr->question_ms = tr->later_ms = 0;
	/* Answered for sure (confirmed after it even at the earliest): forgotten,
	 * and the later question, if not answered as surely, is the first now. */
	if (!asked_after(tr->question_ms, earliest)) {
		const bool later = asked_after(tr->later_ms, earliest);

		tr->question_ms = 0;
		if (later) {
			tr->question_ms = tr->later_ms;
			tr->question_due_ms = tr->later_due_ms;
		}
		tr->later_ms = 0;
	}
	/* Silence runs on the due times: a look's lateness is not the next
	 * hop's, nor a stall of less than a tick (wps_nh_tick_ok's margin). */
	unanswered = silence(tr, w, true, against);
	if (unanswered == WPS_NH_NOT_ASKED && tr->question_ms) {
		/* In doubt: answered only if the stall was before the kernel's reply.
		 * Kept for a look without one to judge (taking it for answered and
		 * counting from the next question put a silent hop's end off by the
		 * stall and --dead less --probe); the later question is judged now,
		 * and if in doubt as well, the next one asked takes its place. */
		unanswered = silence(tr, w, false, against);
		if (unanswered == WPS_NH_NOT_ASKED)
			tr->later_ms = 0;
	}
	tr->up = wps_nh_alive(seen, probe_ms, dead_ms, unanswered);
	act = wps_nh_next(seen, probe_ms, renewed || since >= UINT32_MAX ? UINT32_MAX : (unsigned)since);
	if (act != WPS_NH_NONE) {
		tr->asked_ms = w->due_ms;
		if (!tr->question_ms) {
			tr->question_ms = w->t_ms;
			tr->question_due_ms = w->due_ms;
		} else if (!tr->later_ms) {
			tr->later_ms = w->t_ms;
			tr->later_due_ms = w->due_ms;
		}
	}
	return act;
}

uint64_t wps_look_due(uint64_t due_ms, uint64_t now_ms, unsigned tick_ms, bool event)
{
	if (event)
		return due_ms;
	return due_ms + tick_ms > now_ms ? due_ms + tick_ms : now_ms + tick_ms;
}

void wps_look_init(struct wps_look_sched *s, uint64_t now_ms, unsigned tick_ms)
{
	*s = (struct wps_look_sched){ .next_ms = now_ms, .when = { .due_ms = now_ms, .tick_ms = tick_ms } };
}

bool wps_look_start(struct wps_look_sched *s, uint64_t now_ms)
{
	/* An event at or after the tick's due time is the tick's look. */
	const bool periodic = now_ms >= s->next_ms;

	if (periodic)
		s->when.due_ms = s->next_ms;
	return periodic;
}

void wps_look_done(struct wps_look_sched *s, uint64_t now_ms, bool periodic)
{
	s->next_ms = wps_look_due(s->next_ms, now_ms, s->when.tick_ms, !periodic);
}

bool wps_nh_tick_ok(unsigned tick_ms, unsigned probe_ms, unsigned dead_ms)
{
	const uint64_t k = tick_ms ? ((uint64_t)probe_ms + tick_ms - 1) / tick_ms : 0;

	return tick_ms && dead_ms > probe_ms && k * tick_ms < dead_ms - probe_ms;
}

int wps_ptb_parse(const __u8 src[16], const __u8 dst[16], const __u8 *q, size_t len, struct wps_ptb *out)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };
	const __u8 *in;
	size_t ilen, l4 = 0;
	__u8 nh;

	memset(out, 0, sizeof(*out));
	if (len < 40 + 16 + 20 || q[0] >> 4 != 6 || (q[6] != 60 && q[6] != 0) || memcmp(q + 8, src, 16) ||
	    memcmp(q + 24, dst, 16))
		return -1;
	/* the options header holding only the WPS option */
	if (q[40 + 1] != WPS_EXTHDR_HDRLEN || q[40 + 2] != WPS_OPT_TYPE || q[40 + 3] != WPS_OPT_DATA_LEN)
		return -1;
	nh = q[40];
	out->fid = (__u16)(q[40 + 6] << 8 | q[40 + 7]);
	out->gid = (__u16)(q[40 + 12] << 8 | q[40 + 13]);
	in = q + 56;
	ilen = len - 56;
	out->inner = in;
	out->inner_len = ilen;
	if (nh == WPS_IPPROTO_IPIP && in[0] >> 4 == 4 && (in[0] & 15) >= 5 && ilen >= (size_t)(in[0] & 15) * 4) {
		out->family = 4;
		out->df = in[6] & 0x40;
		memcpy(out->key.saddr, mapped, 12);
		memcpy(out->key.daddr, mapped, 12);
		memcpy(out->key.saddr + 12, in + 12, 4);
		memcpy(out->key.daddr + 12, in + 16, 4);
		out->key.proto = in[9];
		out->key.family = 4;
		if (!((in[6] << 8 | in[7]) & 0x1fff))
			l4 = (size_t)(in[0] & 15) * 4;
	} else if (nh == WPS_IPPROTO_IPV6 && in[0] >> 4 == 6 && ilen >= 40) {
		out->family = 6;
		memcpy(out->key.saddr, in + 8, 16);
		memcpy(out->key.daddr, in + 24, 16);
		out->key.proto = in[6];	/* extension headers are not walked here: the ports stay 0 then */
		out->key.family = 6;
		l4 = 40;
	} else {
		return -1;
	}
	if (l4 && l4 + 4 <= ilen &&
	    (out->key.proto == 6 || out->key.proto == 17 || out->key.proto == 132 || out->key.proto == 136)) {
		memcpy(&out->key.sport, in + l4, 2);
		memcpy(&out->key.dport, in + l4 + 2, 2);
	}
	return 0;
}

static __u16 csum16(const __u8 *p, size_t n)
{
	unsigned long s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (unsigned long)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (unsigned long)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

size_t wps_ptb_relay4(const struct wps_ptb *p, unsigned mtu, const __u8 src4[4], __u8 *buf, size_t len)
{
	size_t quote = p->inner_len, tot;
	__u16 c;

	if (p->family != 4 || !p->df)
		return 0;
	if (quote > 548 - 28)		/* as the kernel's: 576 bytes in all */
		quote = 548 - 28;
	tot = 20 + 8 + quote;
	if (tot > len)
		return 0;
	memset(buf, 0, 28);
	buf[0] = 0x45;
	buf[2] = (__u8)(tot >> 8);
	buf[3] = (__u8)tot;
	buf[8] = 64;
	buf[9] = 1;		/* ICMP */
	memcpy(buf + 12, src4, 4);
	memcpy(buf + 16, p->inner + 12, 4);	/* to the inner packet's sender */
	c = csum16(buf, 20);
	buf[10] = (__u8)(c >> 8);
	buf[11] = (__u8)c;
	buf[20] = 3;		/* destination unreachable */
	buf[21] = 4;		/* fragmentation needed */
	buf[26] = (__u8)(mtu >> 8);
	buf[27] = (__u8)mtu;
	memcpy(buf + 28, p->inner, quote);
	c = csum16(buf + 20, 8 + quote);
	buf[22] = (__u8)(c >> 8);
	buf[23] = (__u8)c;
	return tot;
}

size_t wps_ptb_relay6(const struct wps_ptb *p, unsigned mtu, __u8 *buf, size_t len)
{
	size_t quote = p->inner_len;

	if (p->family != 6)
		return 0;
	if (quote > 1280 - 48)		/* the whole message within the minimum MTU */
		quote = 1280 - 48;
	if (8 + quote > len)
		return 0;
	memset(buf, 0, 8);
	buf[0] = 2;		/* Packet Too Big */
	buf[4] = (__u8)(mtu >> 24);
	buf[5] = (__u8)(mtu >> 16);
	buf[6] = (__u8)(mtu >> 8);
	buf[7] = (__u8)mtu;
	memcpy(buf + 8, p->inner, quote);
	return 8 + quote;
}

bool wps_bucket_take(struct wps_bucket *b, unsigned rate, unsigned burst, unsigned long long now_ms)
{
	if (!b->last_ms) {
		b->tokens = burst;
	} else if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * rate / 1000.0;
		if (b->tokens > burst)
			b->tokens = burst;
	}
	b->last_ms = now_ms;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}
