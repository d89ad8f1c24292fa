/*
 * testutil.h -- the engine tests' tiny harness.
 *
 * CHECK(cond, fmt, ...) counts a passed or failed check; a test program ends with
 * TEST_DONE(), which prints "<program>: N passed, M failed" and exits non-zero on
 * failure.  Test stores live under a fresh directory from test_tmpdir().
 */
#ifndef WC_TESTUTIL_H
#define WC_TESTUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wc.h"

/* size bytes of memory shared with the processes forked afterwards (exits on failure). */
static inline void *
t_shared_map(size_t size)
{
	void	   *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	return p;
}

/*
 * With WIDECOL_TEST_SHARED_MEMTABLE=<MiB> in the environment, every test program
 * runs with a region of shared memtables of that size (DESIGN.md, "Shared
 * memtables"), made before main and inherited by the processes tests fork: `make
 * check-shared` runs the suite so, with a region big enough for every log and with
 * one so small that logs run out of room and go on with private copies.
 */
__attribute__((constructor)) static void
t_shared_memtables(void)
{
	const char *mib = getenv("WIDECOL_TEST_SHARED_MEMTABLE");
	size_t		size;
	void	   *region;
	wc_err		err;

	if (mib == NULL || atoi(mib) <= 0)
		return;
	size = wc_shared_memtable_region_size((size_t) atoi(mib) << 20);
	region = size > 0 ? t_shared_map(size) : NULL;
	memset(&err, 0, sizeof(err));
	if (region == NULL || wc_shared_memtable_create(region, size, &err) != WC_OK)
	{
		fprintf(stderr, "could not make the shared memtables' region: %s\n", err.msg);
		exit(2);
	}
}

static int	t_passed,
			t_failed;
static const char *t_name = "test";

#define CHECK(cond, ...) do { \
	if (cond) t_passed++; \
	else { t_failed++; fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
		   fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

/* Checks rc == WC_OK, printing the engine's message otherwise. */
#define CHECK_OK(rc, err) CHECK((rc) == WC_OK, "rc=%d (%s): %s", (int) (rc), wc_code_name(rc), (err)->msg)

#define TEST_DONE() do { \
	printf("%s: %d passed, %d failed\n", t_name, t_passed, t_failed); \
	return t_failed ? 1 : 0; \
} while (0)

/* A new empty directory under $TMPDIR (or /tmp); the path lives in static storage
 * (one of 16 slots, reused round robin). */
static inline char *
test_tmpdir(const char *tag)
{
	static int	n;
	static char paths[16][4096];
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char	   *path = paths[n % 16];
	char		cmd[4200];

	snprintf(path, 4096, "%s/wc-test-%s-%d-%d", base, tag, (int) getpid(), n++);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0 || mkdir(path, 0700) != 0)
	{
		fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return path;
}

static inline void
test_rmdir(const char *path)
{
	char		cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t
test_rand(uint64_t *state)
{
	uint64_t	x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

#endif
