/*
 * bench_wc.c -- our engine (wc.h) behind the benchmark's vtable.
 *
 * A key is a rowkey; every cell goes to family "f" (lz4), empty qualifier,
 * timestamp 1.  A put is one wc_db_write of a one-cell batch (tag 0, no sync),
 * the same unit of work as LevelDB's Put.
 *
 * Maintenance (flushing full logs, minor compactions): the engine has no thread
 * of its own; whoever holds a handle runs wc_db_maintain.  In PostgreSQL that is
 * any backend after a statement that wrote, so with several sessions it happens
 * beside the writers, as the peers' background threads do it beside theirs.  By
 * default (--wc-maintain thread) the adapter does the same: a thread with a
 * handle of its own (the engine treats it as another process) runs
 * wc_db_maintain in a loop while the fill runs.  --wc-maintain inline calls it in
 * the writing thread every cfg->wc_maintain_every writes, inside the timed loop.
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wc.h"

#define FAMILY "f"
#define TS 1

struct bench_db
{
	wc_db	   *db;
	wc_batch   *batch;
	bench_config cfg;
	uint64_t	writes;			/* since the last wc_db_maintain */

	/* --wc-maintain thread: a second handle and the thread that maintains with it */
	wc_db	   *mdb;
	pthread_t	mthread;
	int			mstop;			/* set (atomically) to stop the thread */
	int			mfailed;		/* the thread stopped on an error */

	/* readrandom: a point scan, reset per read or opened per read */
	bool		use_reset;
	char		note[128];
	wc_scan_opts point_opts;
	wc_key_range point_range;
	uint8_t		point_key[BENCH_KEY_SIZE];
	wc_scan    *point_scan;

	/* seekrandom: a scan of [key, end), reset per seek */
	wc_scan_opts seek_opts;
	wc_key_range seek_range;
	uint8_t		seek_key[BENCH_KEY_SIZE];
	wc_scan    *seek_scan;
};

static const wc_family_opts families[] = {
	{.name = FAMILY, .max_versions = 0, .ttl_ms = 0, .compression = WC_COMPRESS_LZ4}
};

static int
fail(const char *what, const wc_err *err)
{
	fprintf(stderr, "widecol: %s: %s (%s)\n", what, err->msg, wc_code_name(err->code));
	return -1;
}

static void
wc_describe(const bench_config *cfg, char *buf, size_t len)
{
	char		block[32];
	char		maint[64];

	if (cfg->wc_maintain_thread)
		snprintf(maint, sizeof(maint), "wc_db_maintain in a thread of its own");
	else
		snprintf(maint, sizeof(maint), "wc_db_maintain every %d writes", cfg->wc_maintain_every);
	if (cfg->block_size)
		snprintf(block, sizeof(block), "%zu", cfg->block_size);
	else
		snprintf(block, sizeof(block), "default (wc.h)");
	snprintf(buf, len,
			 "lz4, log_switch_bytes %zu, block %s, bloom %d bits/key, no block cache "
			 "(OS page cache + per-iterator blocks), %s",
			 cfg->write_buffer, block, cfg->bloom_bits, maint);
}

static void *
maintain_loop(void *arg)
{
	bench_db   *b = arg;
	wc_err		err;

	while (!__atomic_load_n(&b->mstop, __ATOMIC_ACQUIRE))
	{
		struct timespec pause = {0, 1000000};	/* 1 ms between rounds */

		wc_err_clear(&err);
		if (wc_db_maintain(b->mdb, &err) != WC_OK)
		{
			fail("maintain (thread)", &err);
			__atomic_store_n(&b->mfailed, 1, __ATOMIC_RELEASE);
			break;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static int
wc_open(const char *dir, const bench_config *cfg, bench_db **out)
{
	bench_db   *b = calloc(1, sizeof(bench_db));
	wc_open_opts o;
	wc_err		err;

	if (b == NULL)
		return -1;
	b->cfg = *cfg;
	memset(&o, 0, sizeof(o));
	o.families = families;
	o.nfamilies = 1;
	o.create_if_missing = true;
	o.log_switch_bytes = cfg->write_buffer;
	o.block_bytes = cfg->block_size;
	o.bloom_bits_per_key = cfg->bloom_bits;
	wc_err_clear(&err);
	if (wc_db_open(dir, &o, &b->db, &err) != WC_OK)
	{
		free(b);
		return fail("open", &err);
	}
	if ((b->batch = wc_batch_new()) == NULL)
	{
		wc_db_close(b->db);
		free(b);
		return -1;
	}
	if (cfg->wc_maintain_thread)
	{
		/* the handle opens in this thread: the engine's lazy one-time setup
		 * (CRC tables) is done before the second thread exists */
		if (wc_db_open(dir, &o, &b->mdb, &err) != WC_OK)
		{
			wc_batch_free(b->batch);
			wc_db_close(b->db);
			free(b);
			return fail("open (maintenance handle)", &err);
		}
		if (pthread_create(&b->mthread, NULL, maintain_loop, b) != 0)
		{
			wc_db_close(b->mdb);
			wc_batch_free(b->batch);
			wc_db_close(b->db);
			free(b);
			fprintf(stderr, "widecol: cannot start the maintenance thread\n");
			return -1;
		}
	}
	*out = b;
	return 0;
}

static void
wc_close(bench_db *b)
{
	if (b->mdb)
	{
		__atomic_store_n(&b->mstop, 1, __ATOMIC_RELEASE);
		pthread_join(b->mthread, NULL);
		wc_db_close(b->mdb);
	}
	wc_scan_close(b->point_scan);
	wc_scan_close(b->seek_scan);
	wc_batch_free(b->batch);
	wc_db_close(b->db);
	free(b);
}

static int
wc_destroy(const char *dir)
{
	wc_err		err;

	wc_err_clear(&err);
	if (wc_db_destroy(dir, &err) != WC_OK)
		return fail("destroy", &err);
	return 0;
}

static int
after_write(bench_db *b)
{
	wc_err		err;

	if (b->mdb)
		return __atomic_load_n(&b->mfailed, __ATOMIC_ACQUIRE) ? -1 : 0;
	if (++b->writes < (uint64_t) b->cfg.wc_maintain_every)
		return 0;
	b->writes = 0;
	wc_err_clear(&err);
	if (wc_db_maintain(b->db, &err) != WC_OK)
		return fail("maintain", &err);
	return 0;
}

static int
wc_put(bench_db *b, const char *key, const char *val, size_t vlen)
{
	wc_err		err;

	wc_err_clear(&err);
	wc_batch_clear(b->batch);
	if (wc_batch_put(b->batch, FAMILY, 1, key, BENCH_KEY_SIZE, NULL, 0, TS, val, vlen, &err) != WC_OK)
		return fail("batch put", &err);
	if (wc_db_write(b->db, &b->batch, 1, 0, false, &err) != WC_OK)
		return fail("write", &err);
	return after_write(b);
}

static int
wc_write_batch(bench_db *b, const char *keys, const char *const *vals, size_t vlen, int n)
{
	wc_err		err;

	wc_err_clear(&err);
	wc_batch_clear(b->batch);
	for (int i = 0; i < n; i++)
		if (wc_batch_put(b->batch, FAMILY, 1, keys + (size_t) i * BENCH_KEY_SIZE, BENCH_KEY_SIZE,
						 NULL, 0, TS, vals[i], vlen, &err) != WC_OK)
			return fail("batch put", &err);
	if (wc_db_write(b->db, &b->batch, 1, 0, false, &err) != WC_OK)
		return fail("write", &err);
	return after_write(b);
}

static int
wc_compact(bench_db *b)
{
	wc_err		err;

	wc_err_clear(&err);
	if (wc_db_flush(b->db, &err) != WC_OK)
		return fail("flush", &err);
	if (wc_db_compact(b->db, &err) != WC_OK)
		return fail("compact", &err);
	if (wc_db_refresh(b->db, &err) != WC_OK)
		return fail("refresh", &err);
	return 0;
}

/* ---------------------------------------------------------------- reads */

static void
set_point(bench_db *b, const char *key)
{
	memcpy(b->point_key, key, BENCH_KEY_SIZE);
	b->point_range.start = b->point_key;
	b->point_range.start_len = BENCH_KEY_SIZE;
	b->point_range.start_bound = WC_INCLUSIVE;
	b->point_range.stop = b->point_key;
	b->point_range.stop_len = BENCH_KEY_SIZE;
	b->point_range.stop_bound = WC_INCLUSIVE;
}

static int
read_point(bench_db *b, wc_scan *scan, int *found, uint64_t *bytes, wc_err *err)
{
	wc_cell_view c;
	int			rc;

	*found = 0;
	*bytes = 0;
	while ((rc = wc_scan_next(scan, &c, err)) == 1)
	{
		/* touch the value, as the peers' get copies it out */
		volatile uint8_t sink = c.val_len ? c.val[c.val_len - 1] : 0;

		(void) sink;
		*found = 1;
		*bytes += c.row_len + c.val_len;
	}
	return rc < 0 ? rc : WC_OK;
}

static int
get_open(bench_db *b, const char *key, int *found, uint64_t *bytes)
{
	wc_scan    *scan;
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	set_point(b, key);
	if (wc_scan_open(b->db, &b->point_opts, &scan, &err) != WC_OK)
		return fail("scan open", &err);
	rc = read_point(b, scan, found, bytes, &err);
	wc_scan_close(scan);
	if (rc != WC_OK)
		return fail("scan next", &err);
	return 0;
}

static int
get_reset(bench_db *b, const char *key, int *found, uint64_t *bytes)
{
	wc_err		err;

	wc_err_clear(&err);
	set_point(b, key);
	if (wc_scan_reset(b->point_scan, &b->point_range, 1, &err) != WC_OK)
		return fail("scan reset", &err);
	if (read_point(b, b->point_scan, found, bytes, &err) != WC_OK)
		return fail("scan next", &err);
	return 0;
}

static int
wc_get(bench_db *b, const char *key, int *found, uint64_t *bytes)
{
	return b->use_reset ? get_reset(b, key, found, bytes) : get_open(b, key, found, bytes);
}

static uint64_t
mix(uint64_t *s)
{
	uint64_t	z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Seconds for n random point reads with one variant. */
static double
time_variant(bench_db *b, bool reset, int n)
{
	uint64_t	s = 12345;
	double		t0;

	b->use_reset = reset;
	t0 = bench_now();
	for (int i = 0; i < n; i++)
	{
		char		key[32];
		int			found;
		uint64_t	bytes;

		snprintf(key, sizeof(key), "%016llu", (unsigned long long) (mix(&s) % b->cfg.num));
		if (wc_get(b, key, &found, &bytes) != 0)
			return -1;
	}
	return bench_now() - t0;
}

static int
wc_prepare_reads(bench_db *b)
{
	wc_err		err;
	char		first[32];

	wc_err_clear(&err);
	if (wc_db_refresh(b->db, &err) != WC_OK)
		return fail("refresh", &err);
	wc_scan_opts_init(&b->point_opts);
	b->point_opts.ranges = &b->point_range;
	b->point_opts.nranges = 1;
	wc_scan_opts_init(&b->seek_opts);
	b->seek_opts.ranges = &b->seek_range;
	b->seek_opts.nranges = 1;

	snprintf(first, sizeof(first), "%016d", 0);
	set_point(b, first);
	if (b->point_scan == NULL &&
		wc_scan_open(b->db, &b->point_opts, &b->point_scan, &err) != WC_OK)
		return fail("scan open", &err);
	memcpy(b->seek_key, first, BENCH_KEY_SIZE);
	b->seek_range.start = b->seek_key;
	b->seek_range.start_len = BENCH_KEY_SIZE;
	b->seek_range.start_bound = WC_INCLUSIVE;
	b->seek_range.stop_bound = WC_UNBOUNDED;
	if (b->seek_scan == NULL &&
		wc_scan_open(b->db, &b->seek_opts, &b->seek_scan, &err) != WC_OK)
		return fail("scan open", &err);

	if (strcmp(b->cfg.wc_read, "open") == 0)
		b->use_reset = false;
	else if (strcmp(b->cfg.wc_read, "reset") == 0)
		b->use_reset = true;
	else
	{
		/*
		 * auto: time both variants on the same keys, alternating over a few rounds
		 * (the machine may be busy), and keep the one with the faster best round
		 */
		int			n = b->cfg.num < 5000 ? (int) b->cfg.num : 5000;
		double		t_open = 1e30,
					t_reset = 1e30;

		(void) time_variant(b, false, n);	/* warm up */
		for (int round = 0; round < 5; round++)
		{
			double		to = time_variant(b, false, n),
						tr = time_variant(b, true, n);

			if (to < 0 || tr < 0)
				return -1;
			if (to < t_open)
				t_open = to;
			if (tr < t_reset)
				t_reset = tr;
		}
		b->use_reset = t_reset < t_open;
		snprintf(b->note, sizeof(b->note),
				 "scan %s per read (calibration, best of 5: open+close %.0f/s, reset %.0f/s)",
				 b->use_reset ? "reset" : "open+close", n / t_open, n / t_reset);
		return 0;
	}
	snprintf(b->note, sizeof(b->note), "scan %s per read", b->use_reset ? "reset" : "open+close");
	return 0;
}

static const char *
wc_read_note(bench_db *b)
{
	return b->note[0] ? b->note : NULL;
}

static int
wc_seek_read(bench_db *b, const char *key, int n, uint64_t *cells, uint64_t *bytes)
{
	wc_cell_view c;
	wc_err		err;
	int			rc = 0;

	wc_err_clear(&err);
	memcpy(b->seek_key, key, BENCH_KEY_SIZE);
	if (wc_scan_reset(b->seek_scan, &b->seek_range, 1, &err) != WC_OK)
		return fail("scan reset", &err);
	for (int i = 0; i < n && (rc = wc_scan_next(b->seek_scan, &c, &err)) == 1; i++)
	{
		(*cells)++;
		*bytes += c.row_len + c.val_len;
	}
	if (rc < 0)
		return fail("scan next", &err);
	return 0;
}

static int
wc_read_all(bench_db *b, uint64_t *cells, uint64_t *bytes)
{
	wc_scan_opts o;
	wc_scan    *scan;
	wc_cell_view c;
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	wc_scan_opts_init(&o);
	if (wc_scan_open(b->db, &o, &scan, &err) != WC_OK)
		return fail("scan open", &err);
	while ((rc = wc_scan_next(scan, &c, &err)) == 1)
	{
		(*cells)++;
		*bytes += c.row_len + c.val_len;
	}
	wc_scan_close(scan);
	if (rc < 0)
		return fail("scan next", &err);
	return 0;
}

const bench_engine bench_engine_wc = {
	.name = "widecol",
	.flag = "wc",
	.describe = wc_describe,
	.open = wc_open,
	.close = wc_close,
	.destroy = wc_destroy,
	.put = wc_put,
	.write_batch = wc_write_batch,
	.compact = wc_compact,
	.prepare_reads = wc_prepare_reads,
	.get = wc_get,
	.seek_read = wc_seek_read,
	.read_all = wc_read_all,
	.read_note = wc_read_note,
};
