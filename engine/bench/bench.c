/*
 * bench.c -- the widecol engine against LevelDB and RocksDB, side by side.
 *
 *   bench [--num N] [--engines wc,leveldb,rocksdb] [--workloads LIST] [--dir DIR]
 *         [--value-size N] [--reads N] [--seeks N] [--batch N] [--seek-nexts N]
 *         [--cache-bytes N] [--write-buffer N] [--block-size N] [--bloom-bits N]
 *         [--wc-read auto|open|reset] [--wc-maintain thread|inline]
 *         [--wc-maintain-every N] [--repeat N]
 *
 * Workloads (db_bench's, on 16-byte keys "%016d" and half-compressible values):
 *   fillseq     N puts in key order, one key per write, fresh store
 *   fillrandom  N puts of a random permutation of the keys, one key per write,
 *               fresh store (every key once, so later reads find all of them)
 *   fillbatch   N puts in key order, batch_size keys per write, fresh store
 *   readrandom  point reads of random keys (uniform in [0, N))
 *   seekrandom  seek to a random key, then read seek_nexts cells (the first included)
 *   readseq     one pass over every cell in order
 * Every fill is followed (untimed) by a flush and a full compaction; the bytes on
 * disk and the write amplification are measured over fill + compaction.  Reads use
 * the store left by the last fill (or an untimed fillseq if none ran).  With
 * --repeat R each workload runs R times (engines alternating, fills on a fresh
 * store each time) and the best run of each engine is reported.
 */

#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ENGINES 3
#define MAX_WORKLOADS 16
#define MB (1024.0 * 1024.0)

static const bench_engine *all_engines[] = {
	&bench_engine_wc, &bench_engine_leveldb, &bench_engine_rocksdb
};

typedef enum wl_kind
{
	WL_FILLSEQ, WL_FILLRANDOM, WL_FILLBATCH, WL_READRANDOM, WL_SEEKRANDOM, WL_READSEQ
} wl_kind;

static const char *const wl_names[] = {
	"fillseq", "fillrandom", "fillbatch", "readrandom", "seekrandom", "readseq"
};

#define NWL (int) (sizeof(wl_names) / sizeof(wl_names[0]))

/* The result of one (workload, engine). */
typedef struct result
{
	bool		done;
	double		secs;
	uint64_t	ops;
	uint64_t	bytes;
	char		note[160];
} result;

/* What a fill left behind, measured after its compaction. */
typedef struct fill_stats
{
	bool		done;
	double		compact_secs;
	uint64_t	disk_bytes;		/* every file in the store directory */
	uint64_t	table_bytes;	/* sorted files only (.sst / .ldb) */
	uint64_t	wchar;			/* bytes handed to write(2)/pwrite(2) */
	uint64_t	write_bytes;	/* bytes the page cache sent (or will send) to disk */
} fill_stats;

typedef struct engine_state
{
	const bench_engine *e;
	bench_db   *db;
	char		path[4096];
	bool		filled;
	bool		reads_ready;
	result		res[NWL];
	fill_stats	fills[NWL];
} engine_state;

static bench_config cfg = {
	.num = 1000000,
	.value_size = 100,
	.write_buffer = 8u << 20,
	.cache_bytes = 8u << 20,
	.block_size = 0,
	.bloom_bits = 10,
	.batch_size = 1000,
	.seek_nexts = 100,
	.wc_read = "auto",
	.wc_maintain_every = 1000,
	.wc_maintain_thread = true,
};
static uint64_t reads = 0;		/* 0 = num */
static uint64_t seeks = 0;		/* 0 = num / 10 */
static int	repeat = 1;			/* runs of each workload; the best is reported */
static char base_dir[4096];
static bool remove_base;
static engine_state engines[MAX_ENGINES];
static int nengines;
static wl_kind workloads[MAX_WORKLOADS];
static int nworkloads;

/* ---------------------------------------------------------------- helpers */

double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path) != 0 && errno != ENOENT)
		fprintf(stderr, "bench: could not remove %s: %s\n", path, strerror(errno));
	return 0;
}

int
bench_rmtree(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return 0;
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

static void
die(const char *msg)
{
	fprintf(stderr, "bench: %s\n", msg);
	exit(1);
}

/* splitmix64: the same sequence for every engine */
static uint64_t
rnd_next(uint64_t *s)
{
	uint64_t	z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline void
make_key(char *buf, uint64_t i)
{
	/* db_bench: "%016d"; written by hand, snprintf would dominate the fills */
	for (int p = BENCH_KEY_SIZE - 1; p >= 0; p--)
	{
		buf[p] = '0' + i % 10;
		i /= 10;
	}
}

/*
 * db_bench's RandomGenerator with compression ratio 0.5: a 1 MiB pool built from
 * 100-byte pieces, each half random printable bytes and half a repetition of them;
 * values are consecutive slices of the pool.
 */
static char *val_pool;
static size_t val_pool_len,
			val_pos;

static void
init_values(void)
{
	uint64_t	s = 301;
	size_t		piece = 100;

	val_pool_len = 1048576 > cfg.value_size * 2 ? 1048576 : cfg.value_size * 2;
	val_pool = malloc(val_pool_len + piece);
	if (val_pool == NULL)
		die("out of memory");
	for (size_t off = 0; off < val_pool_len; off += piece)
	{
		size_t		raw = piece / 2;

		for (size_t i = 0; i < raw; i++)
			val_pool[off + i] = ' ' + (char) (rnd_next(&s) % 95);
		for (size_t i = raw; i < piece; i++)
			val_pool[off + i] = val_pool[off + i - raw];
	}
}

static const char *
next_value(void)
{
	const char *v;

	if (val_pos + cfg.value_size > val_pool_len)
		val_pos = 0;
	v = val_pool + val_pos;
	val_pos += cfg.value_size;
	return v;
}

typedef struct io_counters
{
	uint64_t	wchar,
				write_bytes;
} io_counters;

static io_counters
read_io(void)
{
	io_counters c = {0, 0};
	FILE	   *f = fopen("/proc/self/io", "r");
	char		line[128];

	if (f == NULL)
		return c;
	while (fgets(line, sizeof(line), f))
	{
		unsigned long long v;

		if (sscanf(line, "wchar: %llu", &v) == 1)
			c.wchar = v;
		else if (sscanf(line, "write_bytes: %llu", &v) == 1)
			c.write_bytes = v;
	}
	fclose(f);
	return c;
}

static void
dir_bytes(const char *dir, uint64_t *total, uint64_t *tables)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;

	*total = *tables = 0;
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
	{
		char		p[4352];
		struct stat st;
		size_t		len = strlen(de->d_name);

		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		*total += st.st_size;
		if ((len > 4 && strcmp(de->d_name + len - 4, ".sst") == 0) ||
			(len > 4 && strcmp(de->d_name + len - 4, ".ldb") == 0))
			*tables += st.st_size;
	}
	closedir(d);
}

static void
check(int rc, engine_state *es, const char *what)
{
	if (rc != 0)
	{
		fprintf(stderr, "bench: %s failed on %s\n", what, es->e->name);
		exit(1);
	}
}

static double ops_per_sec(const struct result *r);

/* ---------------------------------------------------------------- workloads */

static uint64_t *perm;			/* fillrandom's key order */

static void
init_perm(void)
{
	uint64_t	s = 1001;

	perm = malloc(cfg.num * sizeof(uint64_t));
	if (perm == NULL)
		die("out of memory");
	for (uint64_t i = 0; i < cfg.num; i++)
		perm[i] = i;
	for (uint64_t i = cfg.num - 1; i > 0; i--)
	{
		uint64_t	j = rnd_next(&s) % (i + 1),
					t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

static void
fresh_store(engine_state *es, const char *wl)
{
	if (es->db)
	{
		es->e->close(es->db);
		es->db = NULL;
		check(es->e->destroy(es->path), es, "destroy");
	}
	if (snprintf(es->path, sizeof(es->path), "%.3900s/%s-%s", base_dir, es->e->flag, wl)
		>= (int) sizeof(es->path))
		die("--dir is too long");
	check(bench_rmtree(es->path), es, "rmtree");
	check(es->e->open(es->path, &cfg, &es->db), es, "open");
	es->filled = false;
	es->reads_ready = false;
}

static void
run_fill(engine_state *es, wl_kind kind, result *r, fill_stats *fs)
{
	const bench_engine *e = es->e;
	uint64_t	n = cfg.num;
	io_counters io0,
				io1;
	double		t0,
				t1;
	char	   *keys;
	const char **vals;
	int			bs = kind == WL_FILLBATCH ? cfg.batch_size : 1;

	keys = malloc((size_t) bs * BENCH_KEY_SIZE);
	vals = malloc((size_t) bs * sizeof(char *));
	if (keys == NULL || vals == NULL)
		die("out of memory");
	fresh_store(es, wl_names[kind]);
	sync();
	val_pos = 0;
	io0 = read_io();
	t0 = bench_now();
	if (bs == 1)
	{
		for (uint64_t i = 0; i < n; i++)
		{
			make_key(keys, kind == WL_FILLRANDOM ? perm[i] : i);
			check(e->put(es->db, keys, next_value(), cfg.value_size), es, "put");
		}
	}
	else
	{
		for (uint64_t i = 0; i < n; i += bs)
		{
			int			m = n - i < (uint64_t) bs ? (int) (n - i) : bs;

			for (int j = 0; j < m; j++)
			{
				make_key(keys + (size_t) j * BENCH_KEY_SIZE, i + j);
				vals[j] = next_value();
			}
			check(e->write_batch(es->db, keys, vals, cfg.value_size, m), es, "write batch");
		}
	}
	t1 = bench_now();
	check(e->compact(es->db), es, "compact");
	fs->compact_secs = bench_now() - t1;
	io1 = read_io();
	dir_bytes(es->path, &fs->disk_bytes, &fs->table_bytes);
	fs->wchar = io1.wchar - io0.wchar;
	fs->write_bytes = io1.write_bytes - io0.write_bytes;
	fs->done = true;
	es->filled = true;

	r->secs = t1 - t0;
	r->ops = n;
	r->bytes = n * (BENCH_KEY_SIZE + cfg.value_size);
	r->done = true;
	free(keys);
	free(vals);
	sync();						/* settle writeback before the next measurement */
}

static void
ensure_filled(engine_state *es)
{
	if (!es->filled)
	{
		result		r;
		fill_stats	fs;

		printf("  (%s: no store filled yet, running an untimed fillseq)\n", es->e->name);
		fflush(stdout);
		memset(&r, 0, sizeof(r));
		memset(&fs, 0, sizeof(fs));
		run_fill(es, WL_FILLSEQ, &r, &fs);
	}
	if (!es->reads_ready)
	{
		check(es->e->prepare_reads(es->db), es, "prepare reads");
		es->reads_ready = true;
	}
}

static void
run_read(engine_state *es, wl_kind kind, result *r)
{
	const bench_engine *e = es->e;
	char		key[BENCH_KEY_SIZE];
	uint64_t	s = 7777,
				ops = 0,
				bytes = 0,
				found = 0;
	double		t0;

	ensure_filled(es);
	t0 = bench_now();
	switch (kind)
	{
		case WL_READRANDOM:
			for (uint64_t i = 0; i < reads; i++)
			{
				int			f;
				uint64_t	b;

				make_key(key, rnd_next(&s) % cfg.num);
				check(e->get(es->db, key, &f, &b), es, "get");
				found += f;
				bytes += b;
			}
			ops = reads;
			break;
		case WL_SEEKRANDOM:
			for (uint64_t i = 0; i < seeks; i++)
			{
				make_key(key, rnd_next(&s) % cfg.num);
				check(e->seek_read(es->db, key, cfg.seek_nexts, &found, &bytes), es, "seek");
			}
			ops = seeks;
			break;
		case WL_READSEQ:
			check(e->read_all(es->db, &found, &bytes), es, "read all");
			ops = found;
			break;
		default:
			break;
	}
	r->secs = bench_now() - t0;
	r->ops = ops;
	r->bytes = bytes;
	r->done = true;
	if (kind == WL_READRANDOM)
	{
		const char *note = e->read_note ? e->read_note(es->db) : NULL;

		snprintf(r->note, sizeof(r->note), "(%llu of %llu found)%s%s",
				 (unsigned long long) found, (unsigned long long) reads,
				 note ? " " : "", note ? note : "");
	}
	else if (kind == WL_SEEKRANDOM)
		snprintf(r->note, sizeof(r->note), "(%llu cells, %.1f per seek)",
				 (unsigned long long) found, seeks ? (double) found / seeks : 0.0);
	else if (kind == WL_READSEQ)
		snprintf(r->note, sizeof(r->note), "(%llu cells)", (unsigned long long) found);
}

/* ---------------------------------------------------------------- output */

static double
ops_per_sec(const struct result *r)
{
	return r->secs > 0 ? r->ops / r->secs : 0;
}

static void
print_result(wl_kind kind, const engine_state *es)
{
	const result *r = &es->res[kind];

	printf("%-12s %-10s %10.0f ops/s %8.1f MB/s  %s\n", wl_names[kind], es->e->name,
		   ops_per_sec(r), r->secs > 0 ? r->bytes / MB / r->secs : 0, r->note);
	fflush(stdout);
}

static const engine_state *
find_engine(const char *flag)
{
	for (int i = 0; i < nengines; i++)
		if (strcmp(engines[i].e->flag, flag) == 0)
			return &engines[i];
	return NULL;
}

static void
print_ratios(wl_kind kind)
{
	const engine_state *ours = find_engine("wc");
	bool		any = false;

	if (ours == NULL || !ours->res[kind].done)
		return;
	for (int i = 0; i < nengines; i++)
	{
		const engine_state *es = &engines[i];

		if (es == ours || !es->res[kind].done || ops_per_sec(&es->res[kind]) == 0)
			continue;
		if (!any)
			printf("%-12s", wl_names[kind]);
		any = true;
		printf(" %s/%s %5.2fx", ours->e->name, es->e->name,
			   ops_per_sec(&ours->res[kind]) / ops_per_sec(&es->res[kind]));
	}
	if (any)
		printf("\n");
	fflush(stdout);
}

static void
print_summary(void)
{
	const engine_state *ours = find_engine("wc");

	printf("\nsummary (ops/s; ratio = widecol / peer)\n");
	printf("%-12s", "workload");
	for (int i = 0; i < nengines; i++)
		printf(" %12s", engines[i].e->name);
	for (int i = 0; i < nengines; i++)
		if (ours && &engines[i] != ours)
			printf(" %10s", engines[i].e->name[0] == 'l' ? "vs leveldb" : "vs rocksdb");
	printf("\n");
	for (int w = 0; w < nworkloads; w++)
	{
		wl_kind		k = workloads[w];

		printf("%-12s", wl_names[k]);
		for (int i = 0; i < nengines; i++)
			printf(" %12.0f", ops_per_sec(&engines[i].res[k]));
		for (int i = 0; i < nengines; i++)
			if (ours && &engines[i] != ours)
			{
				double		p = ops_per_sec(&engines[i].res[k]);

				if (p > 0)
					printf(" %9.2fx", ops_per_sec(&ours->res[k]) / p);
				else
					printf(" %10s", "-");
			}
		printf("\n");
	}

	printf("\nafter each fill + flush + full compaction (logical bytes put: %llu = %llu x %zu)\n",
		   (unsigned long long) (cfg.num * (BENCH_KEY_SIZE + cfg.value_size)),
		   (unsigned long long) cfg.num, BENCH_KEY_SIZE + cfg.value_size);
	printf("%-12s %-10s %9s %14s %14s %12s %12s\n", "fill", "engine", "compact s",
		   "bytes on disk", "table bytes", "write-amp", "write-amp");
	printf("%-12s %-10s %9s %14s %14s %12s %12s\n", "", "", "", "", "", "(wchar)", "(write_bytes)");
	for (int w = 0; w < nworkloads; w++)
	{
		wl_kind		k = workloads[w];
		double		logical = (double) cfg.num * (BENCH_KEY_SIZE + cfg.value_size);

		for (int i = 0; i < nengines; i++)
		{
			const fill_stats *fs = &engines[i].fills[k];

			if (!fs->done)
				continue;
			printf("%-12s %-10s %9.2f %14llu %14llu %11.2fx %11.2fx\n", wl_names[k],
				   engines[i].e->name, fs->compact_secs,
				   (unsigned long long) fs->disk_bytes, (unsigned long long) fs->table_bytes,
				   fs->wchar / logical, fs->write_bytes / logical);
		}
	}
	printf("write-amp (wchar): bytes passed to write/pwrite during fill + compaction / logical bytes;\n"
		   "write-amp (write_bytes): /proc/self/io write_bytes (page-cache pages dirtied) over the same.\n");
}

static void
print_loadavg(const char *when)
{
	FILE	   *f = fopen("/proc/loadavg", "r");
	double		l1,
				l5,
				l15;

	if (f != NULL && fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
		printf("load average %s: %.2f %.2f %.2f (other work on the machine skews the figures)\n",
			   when, l1, l5, l15);
	if (f != NULL)
		fclose(f);
}

static void
print_header(void)
{
	FILE	   *f = fopen("/proc/cpuinfo", "r");
	char		line[256],
				cpu[256] = "?";

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0)
		{
			char	   *p = strchr(line, ':');

			snprintf(cpu, sizeof(cpu), "%s", p ? p + 2 : line);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	printf("widecol engine benchmark: %llu cells, %d-byte keys, %zu-byte values (half compressible)\n",
		   (unsigned long long) cfg.num, BENCH_KEY_SIZE, cfg.value_size);
	printf("machine: %s, %ld CPUs; stores in %s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN), base_dir);
	print_loadavg("at start");
	printf("durability: log on, no sync per write; readrandom %llu reads, seekrandom %llu seeks x %d cells\n",
		   (unsigned long long) reads, (unsigned long long) seeks, cfg.seek_nexts);
	if (repeat > 1)
		printf("each workload runs %d times, engines alternating; the best run of each engine is shown\n",
			   repeat);
	for (int i = 0; i < nengines; i++)
	{
		char		desc[512];

		engines[i].e->describe(&cfg, desc, sizeof(desc));
		printf("  %-8s %s\n", engines[i].e->name, desc);
	}
	if (find_engine("rocksdb"))
		printf("NOTE: Debian's librocksdb 7.8.3 is built with assertions on (no NDEBUG) and runs\n"
			   "      2-3x slower than a release build of RocksDB; read its figures with that in mind.\n");
	if (find_engine("leveldb"))
		printf("NOTE: Debian's LevelDB has no lz4; it runs with snappy.\n");
	printf("\n");
	fflush(stdout);
}

/* ---------------------------------------------------------------- main */

static void
usage(void)
{
	fprintf(stderr,
			"usage: bench [--num N] [--engines wc,leveldb,rocksdb] [--workloads LIST] [--dir DIR]\n"
			"             [--value-size N] [--reads N] [--seeks N] [--batch N] [--seek-nexts N]\n"
			"             [--cache-bytes N] [--write-buffer N] [--block-size N] [--bloom-bits N]\n"
			"             [--wc-read auto|open|reset] [--wc-maintain thread|inline]\n"
			"             [--wc-maintain-every N] [--repeat N]\n"
			"workloads: fillseq,fillrandom,fillbatch,readrandom,seekrandom,readseq (the default, in order)\n");
	exit(2);
}

static void
parse_engines(char *list)
{
	nengines = 0;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
	{
		int			j;

		for (j = 0; j < MAX_ENGINES; j++)
			if (strcmp(t, all_engines[j]->flag) == 0 || strcmp(t, all_engines[j]->name) == 0)
				break;
		if (j == MAX_ENGINES || nengines == MAX_ENGINES)
			usage();
		engines[nengines++].e = all_engines[j];
	}
}

static void
parse_workloads(char *list)
{
	nworkloads = 0;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
	{
		int			j;

		for (j = 0; j < NWL; j++)
			if (strcmp(t, wl_names[j]) == 0)
				break;
		if (j == NWL || nworkloads == MAX_WORKLOADS)
			usage();
		workloads[nworkloads++] = (wl_kind) j;
	}
}

static uint64_t
parse_num(const char *s)
{
	char	   *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s || *end != 0)
		usage();
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"num", required_argument, NULL, 'n'},
		{"engines", required_argument, NULL, 'e'},
		{"workloads", required_argument, NULL, 'w'},
		{"dir", required_argument, NULL, 'd'},
		{"value-size", required_argument, NULL, 'v'},
		{"reads", required_argument, NULL, 'r'},
		{"seeks", required_argument, NULL, 's'},
		{"batch", required_argument, NULL, 'b'},
		{"seek-nexts", required_argument, NULL, 'x'},
		{"cache-bytes", required_argument, NULL, 'c'},
		{"write-buffer", required_argument, NULL, 'W'},
		{"block-size", required_argument, NULL, 'B'},
		{"bloom-bits", required_argument, NULL, 'F'},
		{"wc-read", required_argument, NULL, 'R'},
		{"wc-maintain-every", required_argument, NULL, 'M'},
		{"wc-maintain", required_argument, NULL, 'T'},
		{"repeat", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	char		engines_arg[256] = "wc,leveldb,rocksdb";
	char		workloads_arg[512] = "fillseq,fillrandom,fillbatch,readrandom,seekrandom,readseq";
	const char *dir_arg = NULL;
	int			c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'n': cfg.num = parse_num(optarg); break;
			case 'e': snprintf(engines_arg, sizeof(engines_arg), "%s", optarg); break;
			case 'w': snprintf(workloads_arg, sizeof(workloads_arg), "%s", optarg); break;
			case 'd': dir_arg = optarg; break;
			case 'v': cfg.value_size = parse_num(optarg); break;
			case 'r': reads = parse_num(optarg); break;
			case 's': seeks = parse_num(optarg); break;
			case 'b': cfg.batch_size = (int) parse_num(optarg); break;
			case 'x': cfg.seek_nexts = (int) parse_num(optarg); break;
			case 'c': cfg.cache_bytes = parse_num(optarg); break;
			case 'W': cfg.write_buffer = parse_num(optarg); break;
			case 'B': cfg.block_size = parse_num(optarg); break;
			case 'F': cfg.bloom_bits = (int) parse_num(optarg); break;
			case 'R':
				if (strcmp(optarg, "auto") && strcmp(optarg, "open") && strcmp(optarg, "reset"))
					usage();
				cfg.wc_read = optarg;
				break;
			case 'M': cfg.wc_maintain_every = (int) parse_num(optarg); break;
			case 'T':
				if (strcmp(optarg, "thread") && strcmp(optarg, "inline"))
					usage();
				cfg.wc_maintain_thread = strcmp(optarg, "thread") == 0;
				break;
			case 'P': repeat = (int) parse_num(optarg); break;
			default: usage();
		}
	}
	if (optind != argc || cfg.num == 0 || cfg.num > 100000000 || cfg.batch_size <= 0 ||
		cfg.seek_nexts <= 0 || cfg.wc_maintain_every <= 0 || repeat <= 0 || repeat > 100)
		usage();
	if (reads == 0)
		reads = cfg.num;
	if (seeks == 0)
		seeks = cfg.num / 10 ? cfg.num / 10 : 1;
	parse_engines(engines_arg);
	parse_workloads(workloads_arg);

	if (dir_arg)
	{
		snprintf(base_dir, sizeof(base_dir), "%s", dir_arg);
		if (mkdir(base_dir, 0755) != 0 && errno != EEXIST)
			die("could not create the directory given by --dir");
	}
	else
	{
		snprintf(base_dir, sizeof(base_dir), "/tmp/wcbench.XXXXXX");
		if (mkdtemp(base_dir) == NULL)
			die("mkdtemp failed");
		remove_base = true;
	}

	init_values();
	init_perm();
	print_header();

	for (int w = 0; w < nworkloads; w++)
	{
		wl_kind		k = workloads[w];

		for (int i = 0; i < nengines; i++)
			memset(&engines[i].res[k], 0, sizeof(result));
		/* engines alternate within each repetition; each keeps its best */
		for (int rep = 0; rep < repeat; rep++)
			for (int i = 0; i < nengines; i++)
			{
				engine_state *es = &engines[i];
				result		r;

				memset(&r, 0, sizeof(r));
				if (k <= WL_FILLBATCH)
					run_fill(es, k, &r, &es->fills[k]);
				else
					run_read(es, k, &r);
				if (!es->res[k].done || ops_per_sec(&r) > ops_per_sec(&es->res[k]))
					es->res[k] = r;
				if (repeat > 1)
				{
					printf("  %-10s %-10s run %d: %.0f ops/s\n", wl_names[k], es->e->name, rep + 1,
						   ops_per_sec(&r));
					fflush(stdout);
				}
			}
		for (int i = 0; i < nengines; i++)
			print_result(k, &engines[i]);
		print_ratios(k);
	}
	print_summary();
	print_loadavg("at end");

	for (int i = 0; i < nengines; i++)
	{
		engine_state *es = &engines[i];

		if (es->db)
		{
			es->e->close(es->db);
			es->e->destroy(es->path);
		}
	}
	if (remove_base)
		bench_rmtree(base_dir);
	free(perm);
	free(val_pool);
	return 0;
}
