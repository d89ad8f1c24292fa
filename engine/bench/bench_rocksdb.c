/*
 * bench_rocksdb.c -- RocksDB (C API, <rocksdb/c.h>) behind the benchmark's vtable.
 *
 * lz4, block-based tables with a block cache of cfg->cache_bytes and the same
 * bloom bits, write_buffer_size = our log switch size, the WAL on and no sync
 * per write; everything else RocksDB's defaults.  Debian's librocksdb 7.8.3 is
 * built without NDEBUG (assertions on), which makes it 2-3x slower than a release
 * build: bench.c prints a note saying so.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocksdb/c.h>

#ifndef ROCKSDB_VERSION_STR
#define ROCKSDB_VERSION_STR "?"
#endif

struct bench_db
{
	rocksdb_t  *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_readoptions_t *ropts;
	rocksdb_writeoptions_t *wopts;
	rocksdb_writebatch_t *batch;
	rocksdb_iterator_t *seek_iter;	/* kept open across seeks, like db_bench */
};

static int
fail(const char *what, char *err)
{
	fprintf(stderr, "rocksdb: %s: %s\n", what, err ? err : "?");
	rocksdb_free(err);
	return -1;
}

static void
rdb_describe(const bench_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len,
			 "RocksDB %s, lz4, write_buffer_size %zu, block %zu, bloom %d bits/key, "
			 "block cache %zu",
			 ROCKSDB_VERSION_STR, cfg->write_buffer,
			 cfg->block_size ? cfg->block_size : (size_t) 4096, cfg->bloom_bits, cfg->cache_bytes);
}

static void
free_handles(bench_db *b)
{
	rocksdb_writebatch_destroy(b->batch);
	rocksdb_readoptions_destroy(b->ropts);
	rocksdb_writeoptions_destroy(b->wopts);
	rocksdb_options_destroy(b->opts);
	rocksdb_block_based_options_destroy(b->table);	/* also drops the filter policy */
	rocksdb_cache_destroy(b->cache);
	free(b);
}

static int
rdb_open(const char *dir, const bench_config *cfg, bench_db **out)
{
	bench_db   *b = calloc(1, sizeof(bench_db));
	char	   *err = NULL;

	if (b == NULL)
		return -1;
	b->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(b->opts, 1);
	rocksdb_options_set_compression(b->opts, rocksdb_lz4_compression);
	rocksdb_options_set_write_buffer_size(b->opts, cfg->write_buffer);
	b->table = rocksdb_block_based_options_create();
	if (cfg->block_size)
		rocksdb_block_based_options_set_block_size(b->table, cfg->block_size);
	b->cache = rocksdb_cache_create_lru(cfg->cache_bytes);
	rocksdb_block_based_options_set_block_cache(b->table, b->cache);
	if (cfg->bloom_bits > 0)
		rocksdb_block_based_options_set_filter_policy(b->table,
													  rocksdb_filterpolicy_create_bloom(cfg->bloom_bits));
	rocksdb_options_set_block_based_table_factory(b->opts, b->table);
	b->ropts = rocksdb_readoptions_create();
	b->wopts = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(b->wopts, 0);
	rocksdb_writeoptions_disable_WAL(b->wopts, 0);
	b->batch = rocksdb_writebatch_create();
	b->db = rocksdb_open(b->opts, dir, &err);
	if (err != NULL)
	{
		fail("open", err);
		free_handles(b);
		return -1;
	}
	*out = b;
	return 0;
}

static void
rdb_close(bench_db *b)
{
	if (b->seek_iter)
		rocksdb_iter_destroy(b->seek_iter);
	rocksdb_close(b->db);
	free_handles(b);
}

static int
rdb_destroy(const char *dir)
{
	rocksdb_options_t *o = rocksdb_options_create();
	char	   *err = NULL;

	rocksdb_destroy_db(o, dir, &err);
	rocksdb_options_destroy(o);
	if (err != NULL)
		return fail("destroy", err);
	return bench_rmtree(dir);
}

static int
rdb_put(bench_db *b, const char *key, const char *val, size_t vlen)
{
	char	   *err = NULL;

	rocksdb_put(b->db, b->wopts, key, BENCH_KEY_SIZE, val, vlen, &err);
	return err ? fail("put", err) : 0;
}

static int
rdb_write_batch(bench_db *b, const char *keys, const char *const *vals, size_t vlen, int n)
{
	char	   *err = NULL;

	rocksdb_writebatch_clear(b->batch);
	for (int i = 0; i < n; i++)
		rocksdb_writebatch_put(b->batch, keys + (size_t) i * BENCH_KEY_SIZE, BENCH_KEY_SIZE,
							   vals[i], vlen);
	rocksdb_write(b->db, b->wopts, b->batch, &err);
	return err ? fail("write", err) : 0;
}

static int
rdb_compact(bench_db *b)
{
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	char	   *err = NULL;

	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(b->db, fo, &err);
	rocksdb_flushoptions_destroy(fo);
	if (err != NULL)
		return fail("flush", err);
	rocksdb_compact_range(b->db, NULL, 0, NULL, 0);
	return 0;
}

static int
rdb_prepare_reads(bench_db *b)
{
	if (b->seek_iter == NULL)
		b->seek_iter = rocksdb_create_iterator(b->db, b->ropts);
	return 0;
}

static int
rdb_get(bench_db *b, const char *key, int *found, uint64_t *bytes)
{
	char	   *err = NULL;
	size_t		vlen;
	char	   *v = rocksdb_get(b->db, b->ropts, key, BENCH_KEY_SIZE, &vlen, &err);

	if (err != NULL)
		return fail("get", err);
	*found = v != NULL;
	*bytes = v ? BENCH_KEY_SIZE + vlen : 0;
	rocksdb_free(v);
	return 0;
}

static int
iter_read(rocksdb_iterator_t *it, int n, uint64_t *cells, uint64_t *bytes)
{
	char	   *err = NULL;

	for (int i = 0; (n < 0 || i < n) && rocksdb_iter_valid(it); i++)
	{
		size_t		klen,
					vlen;

		(void) rocksdb_iter_key(it, &klen);
		(void) rocksdb_iter_value(it, &vlen);
		(*cells)++;
		*bytes += klen + vlen;
		rocksdb_iter_next(it);
	}
	rocksdb_iter_get_error(it, &err);
	return err ? fail("iterator", err) : 0;
}

static int
rdb_seek_read(bench_db *b, const char *key, int n, uint64_t *cells, uint64_t *bytes)
{
	rocksdb_iter_seek(b->seek_iter, key, BENCH_KEY_SIZE);
	return iter_read(b->seek_iter, n, cells, bytes);
}

static int
rdb_read_all(bench_db *b, uint64_t *cells, uint64_t *bytes)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator(b->db, b->ropts);
	int			rc;

	rocksdb_iter_seek_to_first(it);
	rc = iter_read(it, -1, cells, bytes);
	rocksdb_iter_destroy(it);
	return rc;
}

const bench_engine bench_engine_rocksdb = {
	.name = "rocksdb",
	.flag = "rocksdb",
	.describe = rdb_describe,
	.open = rdb_open,
	.close = rdb_close,
	.destroy = rdb_destroy,
	.put = rdb_put,
	.write_batch = rdb_write_batch,
	.compact = rdb_compact,
	.prepare_reads = rdb_prepare_reads,
	.get = rdb_get,
	.seek_read = rdb_seek_read,
	.read_all = rdb_read_all,
};
