/*
 * crc32c.c -- CRC-32C, reflected polynomial 0x82F63B78.
 */
#include "crc32c.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static uint32_t crc_table[8][256];
static bool crc_table_ready;
static int	crc_hw = -1;		/* -1 unknown, 0 no, 1 SSE4.2 */

static void
crc_build_table(void)
{
	for (uint32_t i = 0; i < 256; i++)
	{
		uint32_t	c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	crc_table_ready = true;
}

static uint32_t
crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!crc_table_ready)
		crc_build_table();
	while (n >= 8)
	{
		uint32_t	lo = crc ^ ((uint32_t) p[0] | (uint32_t) p[1] << 8 |
								(uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);
		uint32_t	hi = (uint32_t) p[4] | (uint32_t) p[5] << 8 |
			(uint32_t) p[6] << 16 | (uint32_t) p[7] << 24;

		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
			crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
			crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
			crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t
crc_hw_extend(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t	c = crc;

	while (n >= 8)
	{
		uint64_t	w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = __builtin_ia32_crc32qi((uint32_t) c, *p++);
	return (uint32_t) c;
}
#endif

uint32_t
wc_crc32c_extend(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;

	crc = ~crc;
#if defined(__x86_64__)
	if (crc_hw < 0)
	{
		unsigned	a, b, c, d;

		crc_hw = (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) ? 1 : 0;
	}
	if (crc_hw)
		return ~crc_hw_extend(crc, p, n);
#endif
	return ~crc_sw(crc, p, n);
}
