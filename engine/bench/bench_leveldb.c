/*
 * bench_leveldb.c -- LevelDB (C API, <leveldb/c.h>) behind the benchmark's vtable.
 *
 * Debian's LevelDB 1.23 offers snappy or no compression (no lz4), so it runs with
 * snappy.  Block cache of cfg->cache_bytes, write_buffer_size = our log switch
 * size, the same bloom filter bits, the WAL on and no sync per write.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leveldb/c.h>

struct bench_db
{
	leveldb_t  *db;
	leveldb_options_t *opts;
	leveldb_cache_t *cache;
	leveldb_filterpolicy_t *filter;
	leveldb_readoptions_t *ropts;
	leveldb_writeoptions_t *wopts;
	leveldb_writebatch_t *batch;
	leveldb_iterator_t *seek_iter;	/* kept open across seeks, like db_bench */
};

static int
fail(const char *what, char *err)
{
	fprintf(stderr, "leveldb: %s: %s\n", what, err ? err : "?");
	leveldb_free(err);
	return -1;
}

static void
ldb_describe(const bench_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len,
			 "LevelDB %d.%d, snappy (no lz4 in LevelDB), write_buffer_size %zu, block %zu, "
			 "bloom %d bits/key, block cache %zu",
			 leveldb_major_version(), leveldb_minor_version(), cfg->write_buffer,
			 cfg->block_size ? cfg->block_size : (size_t) 4096, cfg->bloom_bits, cfg->cache_bytes);
}

static void ldb_close(bench_db *b);

static int
ldb_open(const char *dir, const bench_config *cfg, bench_db **out)
{
	bench_db   *b = calloc(1, sizeof(bench_db));
	char	   *err = NULL;

	if (b == NULL)
		return -1;
	b->opts = leveldb_options_create();
	leveldb_options_set_create_if_missing(b->opts, 1);
	leveldb_options_set_compression(b->opts, leveldb_snappy_compression);
	leveldb_options_set_write_buffer_size(b->opts, cfg->write_buffer);
	if (cfg->block_size)
		leveldb_options_set_block_size(b->opts, cfg->block_size);
	b->cache = leveldb_cache_create_lru(cfg->cache_bytes);
	leveldb_options_set_cache(b->opts, b->cache);
	if (cfg->bloom_bits > 0)
	{
		b->filter = leveldb_filterpolicy_create_bloom(cfg->bloom_bits);
		leveldb_options_set_filter_policy(b->opts, b->filter);
	}
	b->ropts = leveldb_readoptions_create();
	b->wopts = leveldb_writeoptions_create();
	leveldb_writeoptions_set_sync(b->wopts, 0);
	b->batch = leveldb_writebatch_create();
	b->db = leveldb_open(b->opts, dir, &err);
	if (err != NULL)
	{
		fail("open", err);
		b->db = NULL;
		ldb_close(b);
		return -1;
	}
	*out = b;
	return 0;
}

static void
ldb_close(bench_db *b)
{
	if (b->seek_iter)
		leveldb_iter_destroy(b->seek_iter);
	if (b->db)
		leveldb_close(b->db);
	leveldb_writebatch_destroy(b->batch);
	leveldb_readoptions_destroy(b->ropts);
	leveldb_writeoptions_destroy(b->wopts);
	leveldb_options_destroy(b->opts);
	if (b->filter)
		leveldb_filterpolicy_destroy(b->filter);
	leveldb_cache_destroy(b->cache);
	free(b);
}

static int
ldb_destroy(const char *dir)
{
	leveldb_options_t *o = leveldb_options_create();
	char	   *err = NULL;

	leveldb_destroy_db(o, dir, &err);
	leveldb_options_destroy(o);
	if (err != NULL)
		return fail("destroy", err);
	return bench_rmtree(dir);
}

static int
ldb_put(bench_db *b, const char *key, const char *val, size_t vlen)
{
	char	   *err = NULL;

	leveldb_put(b->db, b->wopts, key, BENCH_KEY_SIZE, val, vlen, &err);
	return err ? fail("put", err) : 0;
}

static int
ldb_write_batch(bench_db *b, const char *keys, const char *const *vals, size_t vlen, int n)
{
	char	   *err = NULL;

	leveldb_writebatch_clear(b->batch);
	for (int i = 0; i < n; i++)
		leveldb_writebatch_put(b->batch, keys + (size_t) i * BENCH_KEY_SIZE, BENCH_KEY_SIZE,
							   vals[i], vlen);
	leveldb_write(b->db, b->wopts, b->batch, &err);
	return err ? fail("write", err) : 0;
}

static int
ldb_compact(bench_db *b)
{
	/* flushes the memtable, then compacts every level */
	leveldb_compact_range(b->db, NULL, 0, NULL, 0);
	return 0;
}

static int
ldb_prepare_reads(bench_db *b)
{
	if (b->seek_iter == NULL)
		b->seek_iter = leveldb_create_iterator(b->db, b->ropts);
	return 0;
}

static int
ldb_get(bench_db *b, const char *key, int *found, uint64_t *bytes)
{
	char	   *err = NULL;
	size_t		vlen;
	char	   *v = leveldb_get(b->db, b->ropts, key, BENCH_KEY_SIZE, &vlen, &err);

	if (err != NULL)
		return fail("get", err);
	*found = v != NULL;
	*bytes = v ? BENCH_KEY_SIZE + vlen : 0;
	leveldb_free(v);
	return 0;
}

static int
iter_read(leveldb_iterator_t *it, int n, uint64_t *cells, uint64_t *bytes)
{
	char	   *err = NULL;

	for (int i = 0; (n < 0 || i < n) && leveldb_iter_valid(it); i++)
	{
		size_t		klen,
					vlen;

		(void) leveldb_iter_key(it, &klen);
		(void) leveldb_iter_value(it, &vlen);
		(*cells)++;
		*bytes += klen + vlen;
		leveldb_iter_next(it);
	}
	leveldb_iter_get_error(it, &err);
	return err ? fail("iterator", err) : 0;
}

static int
ldb_seek_read(bench_db *b, const char *key, int n, uint64_t *cells, uint64_t *bytes)
{
	leveldb_iter_seek(b->seek_iter, key, BENCH_KEY_SIZE);
	return iter_read(b->seek_iter, n, cells, bytes);
}

static int
ldb_read_all(bench_db *b, uint64_t *cells, uint64_t *bytes)
{
	leveldb_iterator_t *it = leveldb_create_iterator(b->db, b->ropts);
	int			rc;

	leveldb_iter_seek_to_first(it);
	rc = iter_read(it, -1, cells, bytes);
	leveldb_iter_destroy(it);
	return rc;
}

const bench_engine bench_engine_leveldb = {
	.name = "leveldb",
	.flag = "leveldb",
	.describe = ldb_describe,
	.open = ldb_open,
	.close = ldb_close,
	.destroy = ldb_destroy,
	.put = ldb_put,
	.write_batch = ldb_write_batch,
	.compact = ldb_compact,
	.prepare_reads = ldb_prepare_reads,
	.get = ldb_get,
	.seek_read = ldb_seek_read,
	.read_all = ldb_read_all,
};
