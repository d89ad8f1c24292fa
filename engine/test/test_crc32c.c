/*
 * test_crc32c.c -- CRC-32C: known answers and the two implementations against
 * each other.
 *
 * wc_crc32c_extend picks SSE4.2 or the portable tables once per process; both are
 * called here directly (crc32c.h), so a machine with SSE4.2 tests the tables too.
 * The check values are the usual ones for CRC-32C: "123456789" and the iSCSI
 * vectors of RFC 3720, appendix B.4.  Then every length and alignment from 0 to
 * 64, the lengths around where SSE4.2 runs three chains at once, longer random
 * buffers, continuation (crc of a|b = extend(crc of a, b)), and
 * first calls made by several threads at once.
 */
#include <pthread.h>
#include <stdint.h>

#include "crc32c.h"
#include "testutil.h"

static uint64_t rng = 0x2545F4914F6CDD1D;

/* SSE4.2 result, or the portable one when this machine has no SSE4.2. */
static bool have_sse42;

static uint32_t
hw_or_sw(uint32_t crc, const void *data, size_t n)
{
	uint32_t	out;

	if (wc_crc32c_extend_sse42(crc, data, n, &out))
		return out;
	return wc_crc32c_extend_portable(crc, data, n);
}

/* Checks one known answer through the dispatching call and both implementations. */
static void
check_vector(const char *what, const uint8_t *data, size_t n, uint32_t want)
{
	uint32_t	got = wc_crc32c(data, n);
	uint32_t	sw = wc_crc32c_extend_portable(0, data, n);
	uint32_t	hw = 0;

	CHECK(got == want, "%s: wc_crc32c 0x%08x, expected 0x%08x", what, got, want);
	CHECK(sw == want, "%s: portable 0x%08x, expected 0x%08x", what, sw, want);
	if (wc_crc32c_extend_sse42(0, data, n, &hw))
		CHECK(hw == want, "%s: SSE4.2 0x%08x, expected 0x%08x", what, hw, want);
}

static void
test_known_answers(void)
{
	uint8_t		buf[32];

	check_vector("empty", (const uint8_t *) "", 0, 0x00000000);
	check_vector("\"123456789\"", (const uint8_t *) "123456789", 9, 0xE3069283);
	memset(buf, 0x00, sizeof(buf));
	check_vector("32 bytes of 0x00", buf, 32, 0x8A9136AA);
	memset(buf, 0xFF, sizeof(buf));
	check_vector("32 bytes of 0xFF", buf, 32, 0x62A8AB43);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t) i;
	check_vector("0..31 ascending", buf, 32, 0x46DD794E);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t) (31 - i);
	check_vector("31..0 descending", buf, 32, 0x113FDB5C);
}

/* Every length 0..64 at every alignment 0..64, from 0 and from another crc. */
static void
test_lengths_and_alignments(void)
{
	static uint8_t buf[64 + 64 + 8];
	int			compared = 0,
				differ = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t) test_rand(&rng);
	for (size_t align = 0; align <= 64; align++)
	{
		for (size_t len = 0; len <= 64; len++)
		{
			const uint8_t *p = buf + align;

			for (int start = 0; start < 2; start++)
			{
				uint32_t	seed = start ? 0xDEADBEEF : 0;
				uint32_t	sw = wc_crc32c_extend_portable(seed, p, len);
				uint32_t	hw = hw_or_sw(seed, p, len);
				uint32_t	any = wc_crc32c_extend(seed, p, len);

				compared++;
				if (sw != hw || sw != any)
				{
					if (differ++ < 5)
						fprintf(stderr, "length %zu at alignment %zu from 0x%08x: portable 0x%08x, SSE4.2 0x%08x, wc_crc32c_extend 0x%08x\n",
								len, align, seed, sw, hw, any);
				}
			}
		}
	}
	CHECK(compared == 65 * 65 * 2, "%d comparisons", compared);
	CHECK(differ == 0, "%d of %d lengths and alignments differ between the implementations",
		  differ, compared);
}

/*
 * Around the lengths where the SSE4.2 implementation starts three chains at
 * once (3 x 256 and 3 x 2,048 bytes) and takes one or two of each, at every
 * alignment 0..7, from 0 and from another crc: the two implementations agree.
 */
static void
test_chain_lengths(void)
{
	static const size_t bases[] = {768, 1536, 6144, 6144 + 768, 12288, 12288 + 1536};
	uint8_t    *buf = malloc(20000);
	int			compared = 0,
				differ = 0;

	for (size_t i = 0; i < 20000; i++)
		buf[i] = (uint8_t) test_rand(&rng);
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (size_t len = bases[b] - 24; len <= bases[b] + 24; len++)
			for (size_t align = 0; align < 8; align++)
				for (int start = 0; start < 2; start++)
				{
					uint32_t	seed = start ? 0x12345678 : 0;

					compared++;
					if (wc_crc32c_extend_portable(seed, buf + align, len) !=
						hw_or_sw(seed, buf + align, len))
						differ++;
				}
	CHECK(differ == 0, "%d of %d lengths around the chains' sizes differ", differ, compared);
	free(buf);
}

/* Random buffers up to 70,000 bytes: the two implementations agree. */
static void
test_long_buffers(void)
{
	const size_t max = 70000;
	uint8_t    *buf = malloc(max + 8);
	int			differ = 0;

	for (size_t i = 0; i < max + 8; i++)
		buf[i] = (uint8_t) test_rand(&rng);
	for (int t = 0; t < 300; t++)
	{
		size_t		len = (size_t) (test_rand(&rng) % (max + 1));
		size_t		align = (size_t) (test_rand(&rng) % 8);

		if (wc_crc32c_extend_portable(0, buf + align, len) != hw_or_sw(0, buf + align, len))
			differ++;
	}
	CHECK(differ == 0, "%d of 300 long buffers differ between the implementations", differ);
	free(buf);
}

/* crc(a | b) == extend(crc(a), b), and likewise in three parts, on both paths. */
static void
test_continuation(void)
{
	uint8_t		buf[1000];
	int			bad = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t) test_rand(&rng);
	for (int t = 0; t < 2000; t++)
	{
		size_t		len = (size_t) (test_rand(&rng) % (sizeof(buf) + 1));
		size_t		a = len ? (size_t) (test_rand(&rng) % (len + 1)) : 0;
		size_t		b = a + (len > a ? (size_t) (test_rand(&rng) % (len - a + 1)) : 0);
		uint32_t	whole = wc_crc32c(buf, len);
		uint32_t	two = wc_crc32c_extend(wc_crc32c(buf, a), buf + a, len - a);
		uint32_t	three = wc_crc32c_extend(wc_crc32c_extend(wc_crc32c(buf, a), buf + a, b - a),
											 buf + b, len - b);
		uint32_t	sw = wc_crc32c_extend_portable(wc_crc32c_extend_portable(0, buf, a),
											   buf + a, len - a);
		uint32_t	hw = hw_or_sw(hw_or_sw(0, buf, a), buf + a, len - a);

		if (two != whole || three != whole || sw != whole || hw != whole)
		{
			if (bad++ < 5)
				fprintf(stderr, "length %zu split at %zu and %zu: whole 0x%08x, two 0x%08x, three 0x%08x, portable 0x%08x, SSE4.2 0x%08x\n",
						len, a, b, whole, two, three, sw, hw);
		}
	}
	CHECK(bad == 0, "%d of 2000 split buffers give another crc than whole", bad);
	/* a split at every byte of the check string */
	for (size_t a = 0; a <= 9; a++)
	{
		const char *check = "123456789";

		CHECK(wc_crc32c_extend(wc_crc32c(check, a), check + a, 9 - a) == 0xE3069283,
			  "\"123456789\" split at %zu", a);
	}
}

/*
 * Threads that all make their first call at once (run first in main, before any
 * other call in this process): each must get the right answers.
 */
#define NTHREADS	8

static pthread_barrier_t start_line;

static void *
first_calls(void *arg)
{
	int		   *wrong = arg;
	uint8_t		zeros[32] = {0};

	pthread_barrier_wait(&start_line);
	for (int i = 0; i < 1000; i++)
		if (wc_crc32c("123456789", 9) != 0xE3069283 || wc_crc32c(zeros, 32) != 0x8A9136AA)
			(*wrong)++;
	return NULL;
}

static void
test_first_calls_in_threads(void)
{
	pthread_t	th[NTHREADS];
	int			wrong[NTHREADS] = {0};
	int			started = 0,
				total = 0;

	pthread_barrier_init(&start_line, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, first_calls, &wrong[i]) == 0)
			started++;
	CHECK(started == NTHREADS, "started %d of %d threads", started, NTHREADS);
	if (started != NTHREADS)
		exit(2);				/* the others wait at the barrier for ever */
	for (int i = 0; i < NTHREADS; i++)
	{
		pthread_join(th[i], NULL);
		total += wrong[i];
	}
	pthread_barrier_destroy(&start_line);
	CHECK(total == 0, "%d wrong answers in threads that made the first calls", total);
}

int
main(void)
{
	uint32_t	ignored;

	t_name = "test_crc32c";
	test_first_calls_in_threads();
	have_sse42 = wc_crc32c_extend_sse42(0, "", 0, &ignored);
	printf("crc32c: %s\n", have_sse42 ? "SSE4.2 and portable implementations compared" :
		   "no SSE4.2 on this machine: the portable implementation only");
	test_known_answers();
	test_lengths_and_alignments();
	test_chain_lengths();
	test_long_buffers();
	test_continuation();
	TEST_DONE();
}
