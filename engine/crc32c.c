/*
 * crc32c.c -- CRC-32C, reflected polynomial 0x82F63B78.
 *
 * Two implementations that give the same values: the SSE4.2 crc32 instruction
 * where the CPU has it, and "slicing by 8" over eight 256-entry tables anywhere.
 * The tables and the choice between the two are set up once per process, at the
 * first call, under pthread_once: the library runs in PostgreSQL backends and in
 * multi-threaded programs, whose threads may make their first calls at once.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define CRC_UNSET		0
#define CRC_PORTABLE	1
#define CRC_SSE42		2

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/*
 * CRC_UNSET until crc_init has run, then the implementation to use.  Stored with
 * release after the tables are built, loaded with acquire: a thread that sees it
 * set sees the tables too, and never takes the pthread_once call again.
 */
static int	crc_impl = CRC_UNSET;

static bool
crc_cpu_has_sse42(void)
{
#if defined(__x86_64__)
	unsigned	a,
				b,
				c,
				d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
#else
	return false;
#endif
}

static void
crc_init(void)
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
	__atomic_store_n(&crc_impl, crc_cpu_has_sse42() ? CRC_SSE42 : CRC_PORTABLE, __ATOMIC_RELEASE);
}

static inline int
crc_which(void)
{
	int			impl = __atomic_load_n(&crc_impl, __ATOMIC_ACQUIRE);

	if (impl == CRC_UNSET)
	{
		pthread_once(&crc_once, crc_init);
		impl = __atomic_load_n(&crc_impl, __ATOMIC_ACQUIRE);
	}
	return impl;
}

/* The portable implementation, on the inverted crc (the tables must be built). */
static uint32_t
crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
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
/* The SSE4.2 implementation, on the inverted crc (only where the CPU has it). */
__attribute__((target("sse4.2")))
static uint32_t
crc_hw(uint32_t crc, const uint8_t *p, size_t n)
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

#if defined(__x86_64__)
	if (crc_which() == CRC_SSE42)
		return ~crc_hw(~crc, p, n);
#else
	(void) crc_which();
#endif
	return ~crc_sw(~crc, p, n);
}

uint32_t
wc_crc32c_extend_portable(uint32_t crc, const void *data, size_t n)
{
	(void) crc_which();
	return ~crc_sw(~crc, data, n);
}

bool
wc_crc32c_extend_sse42(uint32_t crc, const void *data, size_t n, uint32_t *out)
{
#if defined(__x86_64__)
	if (crc_which() != CRC_SSE42)
		return false;
	*out = ~crc_hw(~crc, data, n);
	return true;
#else
	return false;
#endif
}
