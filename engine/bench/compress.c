/*
 * compress.c -- block compression of our engine compared: none, lz4, zstd at
 * several levels, over three corpora (README.md, "Compression").
 *
 *   compress [--pages N] [--cells N] [--reads N] [--block-size N] [--dir DIR]
 *
 * For each corpus and each setting, one store of one family with that
 * compression: the cells written in batches of 1000 (tag 0, no sync), then
 * timed: flush + major compaction (every block compressed twice: the flush's
 * file and the compaction's), a scan of everything (every block decompressed
 * once) and point reads of random rows (a block decompressed per read).  It
 * prints the bytes on disk after the compaction and the ratio raw / disk.
 * Everything is deterministic (xorshift64* from fixed seeds), so runs
 * differ only by the machine.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wc.h"

typedef struct setting
{
	const char *name;
	int			compression;
	int			level;
} setting;

static const setting settings[] = {
	{"none", WC_COMPRESS_NONE, 0},
	{"lz4", WC_COMPRESS_LZ4, 0},
	{"zstd-1", WC_COMPRESS_ZSTD, 1},
	{"zstd-3", WC_COMPRESS_ZSTD, 3},
	{"zstd-9", WC_COMPRESS_ZSTD, 9},
	{"zstd-19", WC_COMPRESS_ZSTD, 19},
};
#define NSETTINGS ((int) (sizeof(settings) / sizeof(settings[0])))

typedef struct corpus
{
	const char *name;
	int			n;
	char	  **rows;
	char	  **vals;
	size_t	   *lens;
	uint64_t	raw;			/* bytes of rowkeys and values */
} corpus;

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what, const wc_err *err)
{
	fprintf(stderr, "compress: %s: %s\n", what, err ? err->msg : "");
	exit(1);
}

static void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
		die("out of memory", NULL);
	return p;
}

static const char *const words[] = {
	"the", "news", "market", "today", "report", "city", "world", "sports", "weather",
	"update", "analysis", "video", "photos", "local", "business", "science", "health",
	"travel", "opinion", "culture", "review", "season", "election", "energy", "company",
};
#define NWORDS ((int) (sizeof(words) / sizeof(words[0])))

/*
 * A web page of 4 to 28 KiB, as a crawler's "contents:html" cell holds it: a
 * shared head and navigation, then articles of markup around words drawn from
 * a small vocabulary, ids, links and a hex token (what does not repeat).
 */
static char *
make_page(uint64_t *s, int i, size_t *len)
{
	size_t		target = 4096 + rnd(s) % (24 * 1024);
	size_t		cap = target + 4096;
	char	   *p = xmalloc(cap);
	size_t		n = 0;

	n += snprintf(p + n, cap - n,
				  "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
				  "<title>Page %d - Example News</title>"
				  "<link rel=\"stylesheet\" href=\"/static/css/site.min.css?v=20240501\">"
				  "<script src=\"/static/js/app.min.js\" defer></script></head>\n<body class=\"page\">"
				  "<header><nav class=\"top\"><a href=\"/\">Home</a><a href=\"/world\">World</a>"
				  "<a href=\"/business\">Business</a><a href=\"/sports\">Sports</a>"
				  "<a href=\"/weather\">Weather</a></nav></header>\n<main id=\"content\">\n", i);
	while (n < target)
	{
		uint64_t	id = rnd(s) % 1000000;

		n += snprintf(p + n, cap - n,
					  "<article class=\"story\" data-id=\"%" PRIu64 "\"><h2><a href=\"/%s/%" PRIu64 "\">",
					  id, words[rnd(s) % NWORDS], id);
		for (int w = 0, k = 3 + (int) (rnd(s) % 6); w < k; w++)
			n += snprintf(p + n, cap - n, "%s%s", w ? " " : "", words[rnd(s) % NWORDS]);
		n += snprintf(p + n, cap - n, "</a></h2><p class=\"summary\">");
		for (int w = 0, k = 15 + (int) (rnd(s) % 40); w < k; w++)
			n += snprintf(p + n, cap - n, "%s%s", w ? " " : "", words[rnd(s) % NWORDS]);
		n += snprintf(p + n, cap - n,
					  "</p><span class=\"meta\">%02d:%02d &middot; token %08" PRIx64 "</span></article>\n",
					  (int) (rnd(s) % 24), (int) (rnd(s) % 60), rnd(s) >> 32);
	}
	n += snprintf(p + n, cap - n,
				  "</main>\n<footer><p>&copy; Example News. All rights reserved.</p></footer></body></html>\n");
	*len = n;
	return p;
}

/* db_bench's values (bench.c): 50 random printable bytes twice, 100 bytes. */
static char *
make_dbbench(uint64_t *s, size_t *len)
{
	char	   *p = xmalloc(100);

	for (int i = 0; i < 50; i++)
		p[i] = p[i + 50] = (char) (' ' + rnd(s) % 95);
	*len = 100;
	return p;
}

/* bench/run.sh's JSON values: a small object of a metric (about 60 bytes). */
static char *
make_json(uint64_t *s, int i, size_t *len)
{
	char	   *p = xmalloc(128);

	*len = (size_t) snprintf(p, 128, "{\"host\": \"host%03d\", \"metric\": \"%s\", \"v\": %.3f, \"seq\": %d}",
							 (int) (rnd(s) % 100), words[rnd(s) % NWORDS],
							 (double) (rnd(s) % 100000) / 1000.0, i);
	return p;
}

static void
make_corpus(corpus *c, const char *name, int n)
{
	uint64_t	s = 0x5EED0000 + (uint64_t) strlen(name);

	c->name = name;
	c->n = n;
	c->rows = xmalloc(sizeof(char *) * n);
	c->vals = xmalloc(sizeof(char *) * n);
	c->lens = xmalloc(sizeof(size_t) * n);
	c->raw = 0;
	for (int i = 0; i < n; i++)
	{
		c->rows[i] = xmalloc(32);
		if (strcmp(name, "pages") == 0)
		{
			snprintf(c->rows[i], 32, "com.example.www/%07d", i);
			c->vals[i] = make_page(&s, i, &c->lens[i]);
		}
		else if (strcmp(name, "dbbench") == 0)
		{
			snprintf(c->rows[i], 32, "%016d", i);
			c->vals[i] = make_dbbench(&s, &c->lens[i]);
		}
		else
		{
			snprintf(c->rows[i], 32, "row%08d", i);
			c->vals[i] = make_json(&s, i, &c->lens[i]);
		}
		c->raw += strlen(c->rows[i]) + c->lens[i];
	}
}

static void
run(const corpus *c, const setting *st, const char *base, size_t block_bytes, int reads)
{
	char		dir[4096];
	wc_family_opts fam = {"f", 0, 0, st->compression, st->level};
	wc_open_opts o;
	wc_db	   *db;
	wc_err		err;
	wc_batch   *b = wc_batch_new();
	wc_file_info *files;
	int			nfiles;
	uint64_t	disk = 0,
				seen = 0,
				rs = 42;
	double		t0,
				t_compact,
				t_scan,
				t_read;
	wc_scan_opts so;
	wc_scan    *scan;
	wc_cell_view v;

	snprintf(dir, sizeof(dir), "%s/%s-%s", base, c->name, st->name);
	memset(&o, 0, sizeof(o));
	o.families = &fam;
	o.nfamilies = 1;
	o.create_if_missing = true;
	o.block_bytes = block_bytes;
	o.log_switch_bytes = SIZE_MAX / 2;	/* one flush, timed below */
	o.ingest_bytes = SIZE_MAX;
	wc_err_clear(&err);
	if (wc_db_open(dir, &o, &db, &err) != WC_OK)
		die("open", &err);
	for (int i = 0; i < c->n; i++)
	{
		if (wc_batch_put(b, "f", 1, c->rows[i], strlen(c->rows[i]), "", 0, 1, c->vals[i],
						 c->lens[i], &err) != WC_OK)
			die("put", &err);
		if ((i + 1) % 1000 == 0 || i + 1 == c->n)
		{
			if (wc_db_write(db, &b, 1, 0, false, &err) != WC_OK)
				die("write", &err);
			wc_batch_clear(b);
		}
	}
	t0 = now();
	if (wc_db_flush(db, &err) != WC_OK || wc_db_compact(db, &err) != WC_OK ||
		wc_db_refresh(db, &err) != WC_OK)
		die("flush/compact", &err);
	t_compact = now() - t0;
	if (wc_db_files(db, &files, &nfiles, &err) != WC_OK)
		die("files", &err);
	for (int i = 0; i < nfiles; i++)
		disk += files[i].file_bytes;
	wc_file_info_free(files, nfiles);

	/* a scan of everything */
	wc_scan_opts_init(&so);
	t0 = now();
	if (wc_scan_open(db, &so, &scan, &err) != WC_OK)
		die("scan", &err);
	while (wc_scan_next(scan, &v, &err) == 1)
		seen += v.val_len;
	wc_scan_close(scan);
	t_scan = now() - t0;
	if (err.code != WC_OK)
		die("scan next", &err);

	/* point reads: one scan reset per read */
	{
		wc_key_range r = {0};

		r.start_bound = r.stop_bound = WC_INCLUSIVE;
		if (wc_scan_open(db, &so, &scan, &err) != WC_OK)
			die("scan", &err);
		t0 = now();
		for (int i = 0; i < reads; i++)
		{
			const char *row = c->rows[rnd(&rs) % c->n];

			r.start = r.stop = (const uint8_t *) row;
			r.start_len = r.stop_len = strlen(row);
			if (wc_scan_reset(scan, &r, 1, &err) != WC_OK || wc_scan_next(scan, &v, &err) != 1)
				die("point read", &err);
		}
		t_read = now() - t0;
		wc_scan_close(scan);
	}
	printf("%-8s %-8s %12" PRIu64 " %7.2f %10.1f %10.1f %12.0f\n", c->name, st->name, disk,
		   (double) c->raw / disk, c->raw / t_compact / 1048576.0, c->raw / t_scan / 1048576.0,
		   reads / t_read);
	fflush(stdout);
	wc_batch_free(b);
	wc_db_close(db);
	if (wc_db_destroy(dir, &err) != WC_OK)
		die("destroy", &err);
}

int
main(int argc, char **argv)
{
	int			pages = 5000,
				cells = 1000000,
				reads = 50000;
	size_t		block_bytes = 0;
	char		base[4096] = "";
	corpus		c[3];

	for (int i = 1; i + 1 < argc; i += 2)
	{
		if (strcmp(argv[i], "--pages") == 0)
			pages = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--cells") == 0)
			cells = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--reads") == 0)
			reads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--block-size") == 0)
			block_bytes = (size_t) atol(argv[i + 1]);
		else if (strcmp(argv[i], "--dir") == 0)
			snprintf(base, sizeof(base), "%s", argv[i + 1]);
		else
		{
			fprintf(stderr, "usage: compress [--pages N] [--cells N] [--reads N] [--block-size N] [--dir DIR]\n");
			return 2;
		}
	}
	if (base[0] == '\0')
	{
		snprintf(base, sizeof(base), "/tmp/wccompress.XXXXXX");
		if (mkdtemp(base) == NULL)
			die("mkdtemp", NULL);
	}
	make_corpus(&c[0], "pages", pages);
	make_corpus(&c[1], "dbbench", cells);
	make_corpus(&c[2], "json", cells);
	printf("block size %zu (0 = the store default, 4 KiB); %d point reads per store\n",
		   block_bytes, reads);
	for (int k = 0; k < 3; k++)
		printf("corpus %-8s %d cells, %.1f MB of rowkeys and values\n", c[k].name, c[k].n,
			   c[k].raw / 1048576.0);
	printf("%-8s %-8s %12s %7s %10s %10s %12s\n", "corpus", "setting", "disk bytes", "ratio",
		   "write MB/s", "scan MB/s", "reads/s");
	for (int k = 0; k < 3; k++)
		for (int s = 0; s < NSETTINGS; s++)
			run(&c[k], &settings[s], base, block_bytes, reads);
	rmdir(base);
	return 0;
}
