// SPDX-License-Identifier: BSD-2-Clause
/*
 * The WPS egress statistics, written by the main thread once a second: the
 * XDP counters, the shards' engines and loops added up (each read under its
 * lock), per peer and per flow, as JSON (--stats, what ubctl reads) and as
 * a line on stderr (--live).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "wps/egress_int.h"
#include "wps/egress_stats.h"
#include "wps_egress.skel.h"

struct flow_json {
	FILE *f;
	int n;
	unsigned shard;
};

static int flow_to_json(uint16_t peer, uint16_t node, uint16_t fid, uint16_t neg, const struct wps_flow_stats *s,
			void *arg)
{
	struct flow_json *j = arg;

	fprintf(j->f,
		"%s{\"peer\":%u,\"ingress_node\":%u,\"flow_id\":%u,\"shard\":%u,\"next_expected_group\":%u,"
		"\"packets\":%llu,\"groups\":%llu,\"ooo_groups\":%llu,\"late_packets\":%llu,\"late_groups\":%llu,"
		"\"timer_expiries\":%llu,\"bound_releases\":%llu,\"suspect\":%llu,\"buffered\":%u,\"hwm\":%u}",
		j->n ? "," : "", peer, node, fid, j->shard, neg, (unsigned long long)s->pkts,
		(unsigned long long)s->groups, (unsigned long long)s->ooo_groups, (unsigned long long)s->late_pkts,
		(unsigned long long)s->late_groups, (unsigned long long)s->timer_expiries,
		(unsigned long long)s->bound_releases, (unsigned long long)s->suspect, s->buffered, s->hwm);
	return ++j->n >= 10000;	/* the busiest part of a huge table is enough */
}

/* The shards' engines and loops added up (each read under its lock). */
struct totals {
	struct wps_total_stats t;
	uint64_t rx, bad_desc, tx_xsk, tx_kernel, tx_kernel_fail, tx_fail, rx_multi;
};

static void add_flow_stats(struct wps_flow_stats *a, const struct wps_flow_stats *b)
{
	a->pkts += b->pkts;
	a->groups += b->groups;
	a->ooo_groups += b->ooo_groups;
	a->late_pkts += b->late_pkts;
	a->late_groups += b->late_groups;
	a->timer_expiries += b->timer_expiries;
	a->bound_releases += b->bound_releases;
	a->suspect += b->suspect;
	a->buffered += b->buffered;
	a->hwm += b->hwm;
}

/*
 * Occupancy high-water marks add up over the shards (an upper bound of the
 * whole's: the shards' peaks need not coincide); timeouts and skews are the
 * largest of any shard.
 */
static void totals(struct eg *g, struct totals *x)
{
	memset(x, 0, sizeof(*x));
	for (unsigned i = 0; i < g->nshards; i++) {
		struct shard *s = &g->sh[i];
		struct wps_total_stats t;

		pthread_mutex_lock(&s->lock);
		wps_reorder_totals(s->e, &t);
		x->rx += s->rx, x->bad_desc += s->bad_desc, x->tx_xsk += s->tx_xsk, x->tx_kernel += s->tx_kernel;
		x->tx_kernel_fail += s->tx_kernel_fail, x->tx_fail += s->tx_fail, x->rx_multi += s->rx_multi;
		pthread_mutex_unlock(&s->lock);
		add_flow_stats(&x->t.f, &t.f);
		for (unsigned a = 0; a < WPS_ACT__MAX; a++)
			x->t.actions[a] += t.actions[a];
		x->t.flows_created += t.flows_created;
		x->t.flows_reclaimed += t.flows_reclaimed;
		x->t.flows_policed += t.flows_policed;
		x->t.flows_policed_total += t.flows_policed_total;
		x->t.flows_table_full += t.flows_table_full;
		x->t.flows += t.flows;
		x->t.buffered += t.buffered;
		x->t.hwm += t.hwm;
		if (t.timeout_ns > x->t.timeout_ns)
			x->t.timeout_ns = t.timeout_ns;
		if (t.skew_ns > x->t.skew_ns)
			x->t.skew_ns = t.skew_ns;
	}
}

static void peer_totals(struct eg *g, uint16_t peer, struct wps_peer_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	for (unsigned i = 0; i < g->nshards; i++) {
		struct wps_peer_stats p;

		pthread_mutex_lock(&g->sh[i].lock);
		wps_reorder_peer(g->sh[i].e, peer, &p);
		pthread_mutex_unlock(&g->sh[i].lock);
		ps->flows += p.flows;
		ps->buffered += p.buffered;
		ps->hwm += p.hwm;
		ps->flows_created += p.flows_created;
		ps->flows_policed += p.flows_policed;
		ps->flows_policed_total += p.flows_policed_total;
		ps->flows_table_full += p.flows_table_full;
		ps->bound_releases += p.bound_releases;
		if (p.timeout_ns > ps->timeout_ns)
			ps->timeout_ns = p.timeout_ns;
		if (p.skew_ns > ps->skew_ns)
			ps->skew_ns = p.skew_ns;
	}
}

void wps_eg_write_stats(struct eg *g)
{
	char tmp[4200];
	struct totals x;
	struct wps_total_stats *t = &x.t;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	struct flow_json j = { 0 };
	FILE *f;

	if (!g->o->stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->o->stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	totals(g, &x);
	wps_eg_counters_read(bpf_map__fd(g->skel->maps.wps_eg_stats), xdp);
	fprintf(f, "{\"xdp\":{");
	for (int i = 0; i < WPS_EG_CNT__MAX; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", wps_eg_counter_name((unsigned)i), (unsigned long long)xdp[i]);
	fprintf(f, "},\"reorder\":{\"packets\":%llu,\"groups\":%llu,\"ooo_groups\":%llu,\"late_packets\":%llu,"
		"\"late_groups\":%llu,\"timer_expiries\":%llu,\"bound_releases\":%llu,\"suspect\":%llu,"
		"\"buffered\":%u,\"hwm\":%u,\"flows\":%u,\"flows_created\":%llu,\"flows_reclaimed\":%llu,"
		"\"flows_policed\":%llu,\"flows_policed_total\":%llu,\"flows_table_full\":%llu,"
		"\"release_timeout_us\":%llu,\"skew_us\":%llu,"
		"\"released\":{",
		(unsigned long long)t->f.pkts, (unsigned long long)t->f.groups, (unsigned long long)t->f.ooo_groups,
		(unsigned long long)t->f.late_pkts, (unsigned long long)t->f.late_groups,
		(unsigned long long)t->f.timer_expiries, (unsigned long long)t->f.bound_releases,
		(unsigned long long)t->f.suspect, t->buffered, t->hwm, t->flows, (unsigned long long)t->flows_created,
		(unsigned long long)t->flows_reclaimed, (unsigned long long)t->flows_policed,
		(unsigned long long)t->flows_policed_total, (unsigned long long)t->flows_table_full,
		(unsigned long long)(t->timeout_ns / 1000), (unsigned long long)(t->skew_ns / 1000));
	for (unsigned a = 0; a < WPS_ACT__MAX; a++)
		fprintf(f, "%s\"%s\":%llu", a ? "," : "", wps_action_name(a), (unsigned long long)t->actions[a]);
	fprintf(f, "}},\"io\":{\"rx\":%llu,\"bad_descriptor\":%llu,\"tx_xsk\":%llu,\"tx_kernel\":%llu,"
		"\"tx_kernel_failed\":%llu,\"tx_failed\":%llu,\"rx_multi_buffer\":%llu,\"frame_size\":%u,"
		"\"multi_buffer\":%u,\"xsk_mode\":\"%s\",\"threads\":%u},\"shards\":[",
		(unsigned long long)x.rx, (unsigned long long)x.bad_desc, (unsigned long long)x.tx_xsk,
		(unsigned long long)x.tx_kernel, (unsigned long long)x.tx_kernel_fail, (unsigned long long)x.tx_fail,
		(unsigned long long)x.rx_multi, g->frame_size, xsk_mt_is_sg(g->xm) ? 1u : 0u,
		xsk_mode_bound_name(xsk_mt_is_zerocopy(g->xm)), g->nshards);
	for (unsigned i = 0; i < g->nshards; i++) {
		struct shard *s = &g->sh[i];
		struct wps_total_stats st;

		pthread_mutex_lock(&s->lock);
		wps_reorder_totals(s->e, &st);
		fprintf(f, "%s{\"shard\":%u,\"cpu\":%d,\"rx\":%llu,\"tx_xsk\":%llu,\"packets\":%llu,\"flows\":%u,"
			"\"buffered\":%u,\"hwm\":%u}", i ? "," : "", i, s->cpu, (unsigned long long)s->rx,
			(unsigned long long)s->tx_xsk, (unsigned long long)st.f.pkts, st.flows, st.buffered, st.hwm);
		pthread_mutex_unlock(&s->lock);
	}
	fprintf(f, "],\"peers\":[");
	for (unsigned k = 0; k < g->npeers; k++) {
		struct wps_peer_stats ps;
		char addr[INET6_ADDRSTRLEN] = "any";

		peer_totals(g, (uint16_t)k, &ps);
		if (!g->o->any_peer)
			wps_eg_peer_name(&g->o->peers, k, addr, sizeof(addr));
		fprintf(f, "%s{\"peer\":%u,\"addr\":\"%s\",\"flows\":%u,\"buffered\":%u,\"hwm\":%u,"
			"\"flows_created\":%llu,\"flows_policed\":%llu,\"flows_policed_total\":%llu,"
			"\"flows_table_full\":%llu,\"bound_releases\":%llu,\"release_timeout_us\":%llu,\"skew_us\":%llu}",
			k ? "," : "", k, addr, ps.flows, ps.buffered, ps.hwm, (unsigned long long)ps.flows_created,
			(unsigned long long)ps.flows_policed, (unsigned long long)ps.flows_policed_total,
			(unsigned long long)ps.flows_table_full, (unsigned long long)ps.bound_releases,
			(unsigned long long)(ps.timeout_ns / 1000), (unsigned long long)(ps.skew_ns / 1000));
	}
	fprintf(f, "],\"flows\":[");
	j.f = f;
	for (unsigned i = 0; i < g->nshards && j.n < 10000; i++) {
		j.shard = i;
		pthread_mutex_lock(&g->sh[i].lock);
		wps_reorder_foreach(g->sh[i].e, flow_to_json, &j);
		pthread_mutex_unlock(&g->sh[i].lock);
	}
	fprintf(f, "]}\n");
	if (fclose(f) == 0)
		rename(tmp, g->o->stats_path);
}

void wps_eg_live_line(struct eg *g)
{
	struct totals x;
	__u64 xdp[WPS_EG_CNT__MAX] = { 0 };
	__u64 bad = 0;

	totals(g, &x);
	wps_eg_counters_read(bpf_map__fd(g->skel->maps.wps_eg_stats), xdp);
	for (int i = WPS_EG_CNT_BAD_OPT_LEN; i <= WPS_EG_CNT_DROP_CE_NOT_ECT; i++)
		bad += xdp[i];
	fprintf(stderr,
		"wps egress: rx %llu tx %llu kernel %llu | flows %u buffered %u (hwm %u) ooo %llu late %llu "
		"timer %llu bound %llu timeout %lluus | xdp r0 %llu invalid %llu\n",
		(unsigned long long)x.rx, (unsigned long long)x.tx_xsk, (unsigned long long)x.tx_kernel, x.t.flows,
		x.t.buffered, x.t.hwm, (unsigned long long)x.t.f.ooo_groups, (unsigned long long)x.t.f.late_pkts,
		(unsigned long long)x.t.f.timer_expiries, (unsigned long long)x.t.f.bound_releases,
		(unsigned long long)(x.t.timeout_ns / 1000),
		(unsigned long long)(xdp[WPS_EG_CNT_R0_FWD] + xdp[WPS_EG_CNT_R0_KERNEL]), (unsigned long long)bad);
}
