// SPDX-License-Identifier: BSD-2-Clause
/*
 * ICRC throughput of the packet library (user/lib/icrc.h): the whole ICRC of
 * a UBoE IPv4 packet (masked header + CRC-32 of the rest in place), zlib
 * backend and the fast one (ISA-L when built with it), beside the raw fast
 * CRC-32 over the same bytes (no masking) as the floor, at 256 B, 1 KiB and
 * 4 KiB IP packets. GB/s counts the bytes the ICRC covers (IP packet minus
 * ICRC), per second of this thread's CPU time. Target: ICRC/raw >= 0.8.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "lib/frame.h"

#define NSIZES	3
#define TARGET_NS	20000000ull	/* per measurement */

static volatile uint32_t sink;

#define NKINDS	3	/* ICRC with zlib, raw fast CRC-32, ICRC with the fast CRC */

static uint32_t run_kind(int kind, const uint8_t *ip, size_t len)
{
	switch (kind) {
	case 0:  return ub_icrc_with(ub_crc32_zlib, ip, len);
	case 1:  return ub_crc32_fast(0, ip, len);
	default: return ub_icrc(ip, len);
	}
}

static double gbps(int kind, const uint8_t *ip, size_t len, uint64_t iters)
{
	uint64_t t0 = bench_cpu_ns(), t1;
	uint32_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc ^= run_kind(kind, ip, len);
	t1 = bench_cpu_ns();
	sink = acc;
	return (double)len * (double)iters / (double)(t1 - t0);	/* bytes/ns = GB/s */
}

/* Iterations that take about TARGET_NS with this backend. */
static uint64_t calibrate(int kind, const uint8_t *ip, size_t len)
{
	uint64_t iters = 64, t0, dt;

	for (;;) {
		t0 = bench_cpu_ns();
		for (uint64_t i = 0; i < iters; i++)
			sink ^= run_kind(kind, ip, len);
		dt = bench_cpu_ns() - t0;
		if (dt > TARGET_NS / 8)
			return iters * TARGET_NS / dt + 1;
		iters *= 4;
	}
}

int icrc_bench(int rounds)
{
	static const size_t sizes[NSIZES] = { 256, 1024, 4096 };
	static uint8_t frames[NSIZES][4096 + 64];
	double res[NSIZES][NKINDS][100];
	uint64_t iters[NSIZES][NKINDS];
	const uint8_t *ip[NSIZES];
	size_t len[NSIZES];

	for (int s = 0; s < NSIZES; s++) {
		struct ub_pkt_spec sp;
		size_t n;

		ub_pkt_spec_init(&sp);
		sp.ip_ver = 4;
		sp.payload_len = sizes[s] - ub_pkt_ip_len(&sp);
		n = ub_build_uboe(&sp, frames[s], sizeof(frames[s]));
		if (!n || ub_pkt_ip_len(&sp) != sizes[s]) {
			fprintf(stderr, "bench: FAILED: cannot build a %zu-byte UBoE packet\n", sizes[s]);
			return 1;
		}
		ip[s] = frames[s] + (n - sizes[s]);
		len[s] = sizes[s] - UBOE_ICRC_LEN;
		for (int b = 0; b < NKINDS; b++) {
			if (b != 1 && run_kind(b, ip[s], len[s]) != ub_icrc_get(ip[s], sizes[s])) {
				fprintf(stderr, "bench: FAILED: %s ICRC of a %zu-byte packet is wrong\n",
					b ? ub_crc32_fast_name() : "zlib", sizes[s]);
				return 1;
			}
			iters[s][b] = calibrate(b, ip[s], len[s]);
		}
	}
	/* Interleaved like the XDP part: every (size, backend) once per round. */
	for (int r = 0; r < rounds; r++)
		for (int s = 0; s < NSIZES; s++)
			for (int b = 0; b < NKINDS; b++)
				res[s][b][r] = gbps(b, ip[s], len[s], iters[s][b]);

	printf("ICRC throughput, GB/s (median of %d rounds; fast backend: %s, the icrc column's: %s)\n",
	       rounds, ub_crc32_fast_name(), ub_icrc_crc_name());
	printf("%-10s %10s %10s %10s %9s %11s\n", "IP packet", "icrc-zlib", "raw-crc32",
	       "icrc", "fast/zlib", "icrc/raw");
	for (int s = 0; s < NSIZES; s++) {
		double z = bench_median(res[s][0], rounds), raw = bench_median(res[s][1], rounds),
		       f = bench_median(res[s][2], rounds);

		printf("%-10zu %10.2f %10.2f %10.2f %8.1fx %10.2fx%s\n", sizes[s], z, raw, f, f / z,
		       f / raw, f / raw >= 0.8 ? "" : "  (below 0.8)");
	}
	return 0;
}
