// SPDX-License-Identifier: BSD-2-Clause
#include "icrc.h"

#include <string.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include "ub_wire.h"

uint32_t ub_crc32_zlib(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_z: zlib's uInt length would cut buffers past 4 GiB. */
	return (uint32_t)crc32_z(crc, buf, len);
}

#ifdef HAVE_ISAL
/*
 * crc32_gzip_refl inverts on entry and exit exactly like zlib's crc32, so
 * init 0 starts a CRC and a previous result chains (test_icrc checks both).
 */
uint32_t ub_crc32_fast(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

const char *ub_crc32_fast_name(void) { return "isa-l"; }
#else
uint32_t ub_crc32_fast(uint32_t crc, const void *buf, size_t len)
{
	return ub_crc32_zlib(crc, buf, len);
}

const char *ub_crc32_fast_name(void) { return "zlib"; }
#endif

/* Largest masked prefix: IPv4 with 40 bytes of options, then UDP. */
#define MASK_MAX (60 + 8)

/* Set [off, off + cnt) of a copy of n bytes to all ones, as far as it goes. */
static void mask(uint8_t *out, size_t n, size_t off, size_t cnt)
{
	for (size_t i = off; i < off + cnt && i < n; i++)
		out[i] = 0xff;
}

/*
 * Copy the IP and UDP headers with the mutable fields set to all ones and
 * return how many bytes were copied. Only the headers are copied: the
 * payload is hashed in place by chaining the CRC, so the cost of the mask
 * does not grow with the packet. A non-IP buffer is hashed unmasked (copy 0).
 */
static size_t masked_headers(const uint8_t *ip, size_t len, uint8_t *out)
{
	size_t hdr, n;

	if (len == 0)
		return 0;
	switch (ip[0] >> 4) {
	case 4:
		hdr = (size_t)(ip[0] & 0x0f) * 4;
		break;
	case 6:
		hdr = 40;
		break;
	default:
		return 0;
	}
	/* Through the UDP checksum, and through the IPv4 checksum even when
	 * a bogus IHL (0 or 1) puts "UDP" inside the fixed header. hdr <= 60. */
	n = hdr + 8 > 12 ? hdr + 8 : 12;
	if (n > len)
		n = len;
	memcpy(out, ip, n);

	if ((ip[0] >> 4) == 4) {
		mask(out, n, 1, 1);	/* ToS: DSCP + ECN */
		mask(out, n, 8, 1);	/* TTL */
		mask(out, n, 10, 2);	/* header checksum */
	} else {
		out[0] |= 0x0f;		/* traffic class, high nibble */
		mask(out, n, 1, 3);	/* traffic class low nibble, flow label */
		mask(out, n, 7, 1);	/* hop limit */
	}
	mask(out, n, hdr + 6, 2);	/* UDP checksum */
	return n;
}

uint32_t ub_icrc_with(ub_crc32_fn crc32, const void *ip, size_t len)
{
	uint8_t hdr[MASK_MAX];
	size_t n = masked_headers(ip, len, hdr);
	uint32_t crc = crc32(0, hdr, n);

	return crc32(crc, (const uint8_t *)ip + n, len - n);
}

uint32_t ub_icrc(const void *ip, size_t len)
{
	return ub_icrc_with(ub_crc32_fast, ip, len);
}

uint32_t ub_icrc_get(const void *ip, size_t len)
{
	const uint8_t *p;

	if (len < UBOE_ICRC_LEN)
		return 0;
	p = (const uint8_t *)ip + len - UBOE_ICRC_LEN;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ub_icrc_put(void *ip, size_t len)
{
	uint32_t crc;
	uint8_t *p;

	if (len < UBOE_ICRC_LEN)
		return;
	crc = ub_icrc(ip, len - UBOE_ICRC_LEN);
	p = (uint8_t *)ip + len - UBOE_ICRC_LEN;
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

bool ub_icrc_ok(const void *ip, size_t len)
{
	if (len < UBOE_ICRC_LEN)
		return false;
	return ub_icrc(ip, len - UBOE_ICRC_LEN) == ub_icrc_get(ip, len);
}
