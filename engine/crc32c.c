/*
 * crc32c.c -- CRC-32C, reflected polynomial 0x82F63B78.
 *
 * Two implementations that give the same values: the SSE4.2 crc32 instruction
 * where the CPU has it, and "slicing by 8" over eight 256-entry tables anywhere.
 * The tables and the choice between the two are set up once per process, at the
 * first call, under pthread_once: the library runs in PostgreSQL backends and in
 * multi-threaded programs, whose threads may make their first calls at once.
 *
 * The instruction takes 3 cycles and can start one a cycle: one chain of them
 * (each step needs the last one's crc) uses a third of what the CPU can do.  So
 * a buffer of 3 x len bytes is done as three chains at once, of its thirds, the
 * second and third started from 0, and put together: the crc register after
 * a then b is the register after a followed by len zero bytes, xor the
 * register of b from 0 (the register's steps are linear over GF(2)).  Feeding
 * len zero bytes is a linear map of the 32-bit register, kept as four tables
 * of 256 (one per byte of the register), made at the first call from the
 * images of the 32 single bits (the instruction over zeros).  Chains of 2 KiB
 * for long buffers, 256 bytes for shorter ones; the rest, and buffers under
 * 768 bytes (most log records), one chain as before.  On the 2-CPU VM: a 4 KiB
 * block (every data block written, and read from a mapped file) 8.0 GB/s
 * before, 17.7 after; 64 KiB 7.8 and 21.8; a sorted file's filter and index,
 * checked when a session opens it, 7.2 and 20.0 (1 MiB).
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

#if defined(__x86_64__)
#define CRC_LONG		2048	/* bytes of each of three chains at once */
#define CRC_SHORT		256

/* The register after CRC_LONG (CRC_SHORT) zero bytes: byte k of the register
 * (k = 0 its low byte) maps through [k]; made only with SSE4.2. */
static uint32_t crc_shift_long[4][256];
static uint32_t crc_shift_short[4][256];
#endif

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

#if defined(__x86_64__)
/* The register c after n zero bytes (n a multiple of 8), by the instruction. */
__attribute__((target("sse4.2")))
static uint32_t
crc_zeros_hw(uint32_t c, size_t n)
{
	uint64_t	x = c;

	for (size_t i = 0; i < n; i += 8)
		x = __builtin_ia32_crc32di(x, 0);
	return (uint32_t) x;
}

static inline uint32_t
crc_shift(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/* Fills the tables of a map from the images of single bits (t[k][1 << j]): each
 * entry is the one without its lowest bit, xor that bit's image. */
static void
crc_shift_fill(uint32_t t[4][256])
{
	for (int k = 0; k < 4; k++)
	{
		t[k][0] = 0;
		for (uint32_t v = 1; v < 256; v++)
			t[k][v] = t[k][v & (v - 1)] ^ t[k][v & -v];
	}
}

/*
 * The maps of CRC_SHORT and CRC_LONG zero bytes: the first by the instruction
 * over zeros from each single bit, the second as CRC_LONG / CRC_SHORT runs of
 * the first: a process's first call (which makes them) took 46 us (median of
 * 300 processes) against 37 us before the three chains; with the long map made
 * by the instruction too, and CPUID asked twice, 73 us.
 */
static void
crc_shift_init(void)
{
	for (int b = 0; b < 32; b++)
		crc_shift_short[b / 8][1u << (b % 8)] = crc_zeros_hw((uint32_t) 1 << b, CRC_SHORT);
	crc_shift_fill(crc_shift_short);
	for (int b = 0; b < 32; b++)
	{
		uint32_t	c = (uint32_t) 1 << b;

		for (int r = 0; r < CRC_LONG / CRC_SHORT; r++)
			c = crc_shift(crc_shift_short, c);
		crc_shift_long[b / 8][1u << (b % 8)] = c;
	}
	crc_shift_fill(crc_shift_long);
}
#endif

static void
crc_init(void)
{
	/* asked once: on a virtual machine CPUID traps to the hypervisor (~20 us here) */
	bool		sse42 = crc_cpu_has_sse42();

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
#if defined(__x86_64__)
	if (sse42)
		crc_shift_init();
#endif
	__atomic_store_n(&crc_impl, sse42 ? CRC_SSE42 : CRC_PORTABLE, __ATOMIC_RELEASE);
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
/* The register c after the 3 x len bytes at p, as three chains (len a multiple
 * of 8; t the map of len zero bytes). */
__attribute__((target("sse4.2")))
static inline uint64_t
crc_hw3(uint64_t c, const uint8_t *p, size_t len, const uint32_t t[4][256])
{
	uint64_t	c1 = 0,
				c2 = 0;

	for (size_t i = 0; i < len; i += 8)
	{
		uint64_t	w0,
					w1,
					w2;

		memcpy(&w0, p + i, 8);
		memcpy(&w1, p + len + i, 8);
		memcpy(&w2, p + 2 * len + i, 8);
		c = __builtin_ia32_crc32di(c, w0);
		c1 = __builtin_ia32_crc32di(c1, w1);
		c2 = __builtin_ia32_crc32di(c2, w2);
	}
	c = crc_shift(t, (uint32_t) c) ^ (uint32_t) c1;
	return crc_shift(t, (uint32_t) c) ^ (uint32_t) c2;
}

/* The SSE4.2 implementation, on the inverted crc (only where the CPU has it). */
__attribute__((target("sse4.2")))
static uint32_t
crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t	c = crc;

	for (; n >= 3 * CRC_LONG; p += 3 * CRC_LONG, n -= 3 * CRC_LONG)
		c = crc_hw3(c, p, CRC_LONG, crc_shift_long);
	for (; n >= 3 * CRC_SHORT; p += 3 * CRC_SHORT, n -= 3 * CRC_SHORT)
		c = crc_hw3(c, p, CRC_SHORT, crc_shift_short);
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
