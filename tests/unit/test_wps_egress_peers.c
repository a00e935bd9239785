// SPDX-License-Identifier: BSD-2-Clause
/*
 * The WPS egress's --peer values (user/wps/egress_peers.c): addresses with
 * and without Ingress Node IDs, peer indexes by first appearance, the map
 * entries the XDP program looks up, and every refusal.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "wps/egress_peers.h"

static struct wps_eg_peers s;
static struct wps_eg_peer_key keys[WPS_EG_MAX_PEER_KEYS];
static uint32_t idx[WPS_EG_MAX_PEER_KEYS];

/* Index of the entry (addr, node) among keys, or -1. */
static int find(unsigned n, const char *addr, uint32_t node)
{
	uint8_t a[16];

	inet_pton(AF_INET6, addr, a);
	for (unsigned i = 0; i < n; i++)
		if (!memcmp(keys[i].addr, a, 16) && keys[i].node == node)
			return (int)i;
	return -1;
}

static void ids_and_indexes(void **state)
{
	char err[256] = "";
	unsigned n;
	int k;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(wps_eg_peers_parse(&s, "fd00::2=1,fd00::3", err, sizeof(err)), 0);
	assert_int_equal(wps_eg_peers_parse(&s, "fd00::2=0x10", err, sizeof(err)), 0);	/* a second ID */
	assert_int_equal(s.n, 3);
	assert_int_equal(wps_eg_peers_count(&s), 2);
	assert_int_equal(wps_eg_peer_index(&s, 0), 0);
	assert_int_equal(wps_eg_peer_index(&s, 1), 1);
	assert_int_equal(wps_eg_peer_index(&s, 2), 0);
	n = wps_eg_peers_keys(&s, keys, idx);
	assert_int_equal(n, 5);		/* two address markers, three entries */
	k = find(n, "fd00::2", WPS_EG_PEER_ADDR);
	assert_true(k >= 0 && idx[k] == 0);
	k = find(n, "fd00::2", 1);
	assert_true(k >= 0 && idx[k] == 0);
	k = find(n, "fd00::2", 16);
	assert_true(k >= 0 && idx[k] == 0);
	k = find(n, "fd00::3", WPS_EG_PEER_ANY_NODE);
	assert_true(k >= 0 && idx[k] == 1);
	k = find(n, "fd00::3", WPS_EG_PEER_ADDR);
	assert_true(k >= 0 && idx[k] == 1);
	assert_int_equal(find(n, "fd00::2", WPS_EG_PEER_ANY_NODE), -1);	/* IDs given: no wildcard */
	wps_eg_peer_name(&s, 1, err, sizeof(err));
	assert_string_equal(err, "fd00::3");
}

static void refusals_leave_the_set_as_it_was(void **state)
{
	static const char *const bad[] = {
		"", "10.0.0.1", "fd00::2=65536", "fd00::2=-1", "fd00::2=", "fd00::2=x", "ff02::1", "::",
		"fd00::2,nonsense", ",",
	};
	char err[256], many[4096];
	size_t len = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(wps_eg_peers_parse(&s, "fd00::9", err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (!wps_eg_peers_parse(&s, bad[i], err, sizeof(err)))
			fail_msg("'%s' accepted", bad[i]);
		assert_true(err[0] == '-');	/* "--peer ...": one line naming the option */
		assert_int_equal(s.n, 1);
	}
	/* More peer addresses than the program serves. */
	for (int i = 0; i <= WPS_EG_MAX_PEERS; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len, "%sfd01::%x", i ? "," : "", i + 1);
	assert_int_equal(wps_eg_peers_parse(&s, many, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "peer addresses"));
	assert_int_equal(s.n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_and_indexes),
		cmocka_unit_test(refusals_leave_the_set_as_it_was),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
