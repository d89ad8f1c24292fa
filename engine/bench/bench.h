/*
 * bench.h -- the engine benchmark: one small vtable per storage engine.
 *
 * bench.c drives the workloads and prints the results; bench_wc.c,
 * bench_leveldb.c and bench_rocksdb.c adapt our engine, LevelDB and RocksDB
 * (through their C APIs) to the same handful of operations.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_KEY_SIZE 16

/* Settings shared by every engine, so the comparison is like for like. */
typedef struct bench_config
{
	uint64_t	num;			/* cells */
	size_t		value_size;
	size_t		write_buffer;	/* ours: log_switch_bytes; peers: write_buffer_size */
	size_t		cache_bytes;	/* peers' block cache (ours has none: OS page cache) */
	size_t		block_size;		/* 0 = each engine's default */
	int			bloom_bits;		/* bloom filter bits per key, every engine */
	int			batch_size;		/* fillbatch */
	int			seek_nexts;		/* cells read per seekrandom operation */
	const char *wc_read;		/* ours, readrandom: "open", "reset" or "auto" */
	int			wc_maintain_every;	/* ours, inline: wc_db_maintain after this many writes */
	bool		wc_maintain_thread; /* ours: maintenance in a thread of its own (the default) */
} bench_config;

typedef struct bench_db bench_db;	/* each engine's own handle */

typedef struct bench_engine
{
	const char *name;			/* printed: "widecol", "leveldb", "rocksdb" */
	const char *flag;			/* on the command line: "wc", "leveldb", "rocksdb" */

	/* One line on the settings actually used. */
	void		(*describe) (const bench_config *cfg, char *buf, size_t len);

	/* Each returns 0, or -1 after printing the error to stderr. */
	int			(*open) (const char *dir, const bench_config *cfg, bench_db **out);
	void		(*close) (bench_db *db);
	int			(*destroy) (const char *dir);

	/* One key per write call (no sync, log on). */
	int			(*put) (bench_db *db, const char *key, const char *val, size_t vlen);
	/* n keys of BENCH_KEY_SIZE bytes at keys[i*16], values vals[i], as one atomic write. */
	int			(*write_batch) (bench_db *db, const char *keys, const char *const *vals,
								size_t vlen, int n);
	/* Flush everything and compact to the final shape. */
	int			(*compact) (bench_db *db);

	/* Called once before the read workloads (ours: refresh, pick the read variant). */
	int			(*prepare_reads) (bench_db *db);
	/* Point read: *found = 1 and *bytes = key + value length if the key exists. */
	int			(*get) (bench_db *db, const char *key, int *found, uint64_t *bytes);
	/* Seek to key, read up to n cells (the first included). */
	int			(*seek_read) (bench_db *db, const char *key, int n, uint64_t *cells,
							  uint64_t *bytes);
	/* Read every cell in order. */
	int			(*read_all) (bench_db *db, uint64_t *cells, uint64_t *bytes);
	/* A note for the readrandom line (ours: which read variant), or NULL. */
	const char *(*read_note) (bench_db *db);
} bench_engine;

extern const bench_engine bench_engine_wc;
extern const bench_engine bench_engine_leveldb;
extern const bench_engine bench_engine_rocksdb;

/* bench.c */
double		bench_now(void);
int			bench_rmtree(const char *dir);

#endif							/* BENCH_H */
