// SPDX-License-Identifier: BSD-2-Clause
#include "io/ub2e_stats.h"
#include "io/percpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define UB2E_CNT_NAME(id, name) [UB2E_CNT_##id] = name,
static const char *const names[UB2E_CNT__MAX] = { UB2E_COUNTERS(UB2E_CNT_NAME) };

const char *ub2e_counter_name(unsigned id)
{
	return id < UB2E_CNT__MAX ? names[id] : "?";
}

/*
 * The one place that classifies counters, by the naming rule of UB2E_COUNTERS
 * (first match wins), so that a counter added there is classified without
 * another edit: name it rx_, tx_, pass_ or drop_ after what it counts.
 */
static const struct {
	const char *prefix;
	enum ub2e_counter_class cls;
} classes[] = {
	{ "rx_", UB2E_CLASS_RX },
	{ "tx_", UB2E_CLASS_TX },
	{ "pass_not_ub", UB2E_CLASS_FOREIGN },	/* pass_not_ub, pass_not_uboe */
	{ "pass_not_for_us", UB2E_CLASS_FOREIGN },	/* another host's MAC: never looked at as UB */
	{ "pass_", UB2E_CLASS_PASS },
	{ "drop_", UB2E_CLASS_DROP },
	{ "", UB2E_CLASS_INFO },		/* cci_not_fecn_forwarded */
};

enum ub2e_counter_class ub2e_counter_class(unsigned id)
{
	const char *n = ub2e_counter_name(id);

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strncmp(n, classes[i].prefix, strlen(classes[i].prefix)))
			return classes[i].cls;
	return UB2E_CLASS_INFO;
}

const char *ub2e_class_name(enum ub2e_counter_class c)
{
	static const char *const n[] = { "rx", "tx", "pass", "drop", "foreign", "info" };

	return (unsigned)c < sizeof(n) / sizeof(n[0]) ? n[c] : "?";
}

int ub2e_counter_id(const char *name)
{
	for (int i = 0; i < UB2E_CNT__MAX; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int ub2e_counters_read(int fd, __u64 out[UB2E_CNT__MAX])
{
	int rc = percpu_counters_sum(fd, UB2E_CNT__MAX, out);

	/* The programs count a forwarded packet once, as tx_* (headers/ub2e_maps.h). */
	if (!rc) {
		out[UB2E_CNT_RX_UB] += out[UB2E_CNT_TX_UBOE];
		out[UB2E_CNT_RX_UBOE] += out[UB2E_CNT_TX_UB];
	}
	return rc;
}
