/*
 * make_seeds.c -- writes the initial fuzzing corpus with the engine's own writers.
 *
 *   make_seeds OUTDIR     writes OUTDIR/{sst,log,manifest,batch,options}/seed-*
 *
 * sst:      small sorted files from wc_sst_builder, plain and LZ4, one and several
 *           blocks, every entry type, an empty file.
 * batch:    log record payloads built as db.c builds them (wc_batch_encode_header
 *           + wc_batch_entries) from batches filled with wc_batch_put etc.
 * log:      logs from wc_log_create + wc_log_append of such payloads, in the three
 *           input modes of fuzz_log.c (first byte 0: the whole file; 1: header
 *           supplied by the harness; 2: records framed by the harness).
 * manifest: wc_manifest_encode images with 0, 1 and 3 files.
 * batch:    also two ingest record payloads (ingest.h), with 1 and 3 files.
 * options:  option names, values and interval fields for fuzz_options.c (valid
 *           ones, and one per check of src/optparse.c).
 *
 * Deterministic: the same engine writes the same files.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "coding.h"
#include "ingest.h"
#include "log.h"
#include "manifest.h"
#include "sst.h"

static const char *outdir;
static char tmpdir[256];
static int	nwritten;

#define DIE_IF(cond, ...) do { if (cond) { fprintf(stderr, "make_seeds: " __VA_ARGS__); \
	fputc('\n', stderr); exit(1); } } while (0)
#define OK(call) do { wc_err e_; int rc_; wc_err_clear(&e_); rc_ = (call); \
	DIE_IF(rc_ != WC_OK, "%s: %s", #call, e_.msg); } while (0)

static void
put_file(const char *kind, const char *name, const uint8_t *data, size_t len)
{
	char		path[512];
	FILE	   *fp;

	snprintf(path, sizeof(path), "%s/%s", outdir, kind);
	DIE_IF(mkdir(path, 0755) != 0 && errno != EEXIST, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s/seed-%s", outdir, kind, name);
	fp = fopen(path, "wb");
	DIE_IF(fp == NULL || (len && fwrite(data, 1, len, fp) != len) || fclose(fp) != 0,
		   "cannot write %s", path);
	nwritten++;
}

static uint8_t *
slurp(const char *name, size_t *len)
{
	char		path[512];
	FILE	   *fp;
	uint8_t    *buf;
	long		n;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fp = fopen(path, "rb");
	DIE_IF(fp == NULL, "open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc((size_t) n + 1);
	DIE_IF(buf == NULL || fread(buf, 1, (size_t) n, fp) != (size_t) n, "read %s", path);
	fclose(fp);
	unlink(path);
	*len = (size_t) n;
	return buf;
}

/* ---------------------------------------------------------------- batches */

#define S(x) (const uint8_t *) (x), strlen(x)

/* The log record payload of batch b, as db.c builds it; caller frees. */
static uint8_t *
payload_of(const wc_batch *b, uint64_t seq_base, uint64_t tag, size_t *len)
{
	size_t		elen;
	const uint8_t *entries = wc_batch_entries(b, &elen);
	uint8_t    *buf = malloc(WC_BATCH_HEADER_MAX + elen);
	size_t		hdr;

	DIE_IF(buf == NULL, "out of memory");
	hdr = wc_batch_encode_header(buf, seq_base, tag, (uint32_t) wc_batch_count(b));
	if (elen)
		memcpy(buf + hdr, entries, elen);
	*len = hdr + elen;
	return buf;
}

/* Batch variants: 0 = a few puts, 1 = every entry type (bounded markers too), 2 = empty, 3 = truncate
 * then a put, 4 = binary keys and a longer value. */
static wc_batch *
make_batch(int variant)
{
	wc_batch   *b = wc_batch_new();
	wc_family_opts fams[2] = {{.name = "cf"}, {.name = "meta"}};
	uint8_t		bin[40];

	DIE_IF(b == NULL, "out of memory");
	switch (variant)
	{
		case 0:
			OK(wc_batch_put(b, S("cf"), S("row1"), S("q"), 1000, S("v1"), &e_));
			OK(wc_batch_put(b, S("cf"), S("row1"), S("r"), 1000, S("v2"), &e_));
			OK(wc_batch_put(b, S("cf"), S("row2"), S("q"), -5, S(""), &e_));
			break;
		case 1:
			OK(wc_batch_put(b, S("cf"), S("a"), S("q"), 7, S("x"), &e_));
			OK(wc_batch_delete_version(b, S("cf"), S("a"), S("q"), 6, &e_));
			OK(wc_batch_delete_column(b, S("cf"), S("a"), S("q"), &e_));
			OK(wc_batch_delete_family(b, S("meta"), S("a"), &e_));
			OK(wc_batch_delete_column_upto(b, S("cf"), S("a"), S("r"), 5, &e_));
			OK(wc_batch_delete_family_upto(b, S("meta"), S("a"), 4, &e_));
			OK(wc_batch_delete_row(b, fams, 2, S("b"), &e_));
			OK(wc_batch_put(b, S("meta"), S("b"), S(""), INT64_MIN, S("min"), &e_));
			break;
		case 2:
			break;
		case 3:
			OK(wc_batch_truncate(b, &e_));
			OK(wc_batch_put(b, S("cf"), S("z"), S("q"), 1, S("after"), &e_));
			break;
		case 4:
			for (size_t i = 0; i < sizeof(bin); i++)
				bin[i] = (uint8_t) (i * 37);
			OK(wc_batch_put(b, S("cf"), bin, 3, bin + 3, 5, INT64_MAX - 1, bin, sizeof(bin), &e_));
			OK(wc_batch_put(b, S("cf"), bin, 4, S(""), 0, S("vvvvvvvvvvvvvvvvvvvvvvvv"), &e_));
			break;
	}
	return b;
}

static void
make_batch_seeds(void)
{
	static const uint64_t bases[] = {1, 42, 1000, 7, UINT64_C(1) << 40};
	static const uint64_t tags[] = {0, 0, 733, 0, 99};

	for (int v = 0; v < 5; v++)
	{
		wc_batch   *b = make_batch(v);
		size_t		len;
		uint8_t    *p = payload_of(b, bases[v], tags[v], &len);
		char		name[32];

		snprintf(name, sizeof(name), "batch%d", v);
		put_file("batch", name, p, len);
		free(p);
		wc_batch_free(b);
	}

	/* ingest records (a bulk write's payload) with 1 and 3 files */
	for (int v = 0; v < 2; v++)
	{
		static const char *const fams[] = {"anchor", "contents", "people"};
		wc_ingest_file files[3];
		wc_ingest_record r = {v ? 1000 : 1, v ? 733 : 99, v ? 50 : 3, v ? 3 : 1, files};
		uint8_t    *p;
		size_t		len;
		char		name[32];

		for (int i = 0; i < 3; i++)
		{
			files[i].number = 12 + (uint64_t) i;
			snprintf(files[i].family, sizeof(files[i].family), "%s", fams[i]);
		}
		OK(wc_ingest_encode(&r, &p, &len, &e_));
		snprintf(name, sizeof(name), "ingest%d", v);
		put_file("batch", name, p, len);
		free(p);
	}
}

/* ---------------------------------------------------------------- logs */

/* A log of the payloads of the given batch variants; returns the file image. */
static uint8_t *
make_log(const int *variants, int n, size_t *len)
{
	wc_file		f;
	uint64_t	end = WC_LOG_HEADER_SIZE;
	uint64_t	seq = 1;

	OK(wc_log_create(tmpdir, "000005.log", 5, &e_));
	OK(wc_file_open(tmpdir, "000005.log", WC_OPEN_RDWR, &f, &e_));
	for (int i = 0; i < n; i++)
	{
		wc_batch   *b = make_batch(variants[i]);
		size_t		plen;
		uint8_t    *p = payload_of(b, seq, 0, &plen);

		OK(wc_log_append(&f, end, p, plen, &end, &e_));
		seq += wc_batch_count(b);
		free(p);
		wc_batch_free(b);
	}
	wc_file_close(&f);
	return slurp("000005.log", len);
}

static void
put_mode(const char *name, uint8_t mode, const uint8_t *data, size_t len)
{
	uint8_t    *buf = malloc(len + 1);

	DIE_IF(buf == NULL, "out of memory");
	buf[0] = mode;
	if (len)
		memcpy(buf + 1, data, len);
	put_file("log", name, buf, len + 1);
	free(buf);
}

static void
make_log_seeds(void)
{
	static const int all[] = {0, 1, 2, 3, 4};
	static const int two[] = {0, 1};
	size_t		len;
	uint8_t    *img;

	/* mode 0: whole files */
	img = make_log(NULL, 0, &len);
	put_mode("log-empty", 0, img, len);
	free(img);
	img = make_log(all, 5, &len);
	put_mode("log-all", 0, img, len);
	/* mode 1: the harness supplies the header */
	put_mode("log-records", 1, img + WC_LOG_HEADER_SIZE, len - WC_LOG_HEADER_SIZE);
	/* a torn tail: the last record cut short */
	put_mode("log-torn", 0, img, len - 3);
	/* damage followed by a valid record: corruption */
	img[WC_LOG_HEADER_SIZE + 12] ^= 0x40;
	put_mode("log-damaged", 0, img, len);
	free(img);
	img = make_log(two, 2, &len);
	put_mode("log-two", 0, img, len);
	free(img);

	/* mode 2: payloads framed by the harness (2-byte length, payload) */
	{
		uint8_t		buf[4096];
		size_t		n = 0;

		for (int v = 0; v < 5; v++)
		{
			wc_batch   *b = make_batch(v);
			size_t		plen;
			uint8_t    *p = payload_of(b, 10 + v * 10, v == 2 ? 5 : 0, &plen);

			DIE_IF(n + 2 + plen > sizeof(buf), "buffer");
			buf[n++] = (uint8_t) plen;
			buf[n++] = (uint8_t) (plen >> 8);
			memcpy(buf + n, p, plen);
			n += plen;
			free(p);
			wc_batch_free(b);
		}
		put_mode("framed", 2, buf, n);
		/* and a raw tail after the framed records */
		memcpy(buf + n, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", 11);
		put_mode("framed-tail", 2, buf, n + 11);
	}
}

/* ---------------------------------------------------------------- sorted files */

typedef struct seed_cell
{
	const char *row;
	const char *qual;
	int64_t		ts;
	uint64_t	seq;
	uint8_t		type;
	const char *val;
} seed_cell;

static void
make_sst(const char *name, const char *family, int compression, size_t block_bytes,
		 int bits, const seed_cell *cells, int n, int repeat, wc_sst_props *props_out)
{
	wc_sst_build_opts o = {.family = family, .level = n % 2, .compression = compression,
	.block_bytes = block_bytes, .bloom_bits_per_key = bits};
	wc_sst_builder *b;
	wc_sst_props props;
	wc_err		err;
	uint8_t    *img;
	size_t		len;
	char		val[200];

	wc_err_clear(&err);
	b = wc_sst_builder_new(tmpdir, "000009.sst", &o, &err);
	DIE_IF(b == NULL, "wc_sst_builder_new: %s", err.msg);
	for (int r = 0; r < repeat; r++)
		for (int i = 0; i < n; i++)
		{
			wc_cell		c = {0};
			char		row[64];

			/* repeat > 1: more rows with the same shape, values that compress */
			if (repeat > 1)
				snprintf(row, sizeof(row), "%03d%s", r, cells[i].row);
			else
				snprintf(row, sizeof(row), "%s", cells[i].row);
			c.row = (const uint8_t *) row;
			c.row_len = (uint32_t) strlen(row);
			c.qual = (const uint8_t *) cells[i].qual;
			c.qual_len = (uint32_t) strlen(cells[i].qual);
			c.ts = cells[i].ts;
			c.seq = cells[i].seq + (uint64_t) r * 100;
			c.type = cells[i].type;
			if (c.type == WC_TYPE_PUT)
			{
				if (repeat > 1)
				{
					memset(val, 'a' + i % 26, sizeof(val));
					c.val_len = 40 + (uint32_t) (i * 7 % 100);
				}
				else
				{
					snprintf(val, sizeof(val), "%s", cells[i].val);
					c.val_len = (uint32_t) strlen(val);
				}
				c.val = (const uint8_t *) val;
			}
			DIE_IF(wc_sst_builder_add(b, &c) != WC_OK, "wc_sst_builder_add %s row %d", name, i);
		}
	DIE_IF(wc_sst_builder_finish(b, &props, &err) != WC_OK, "finish: %s", err.msg);
	img = slurp("000009.sst", &len);
	put_file("sst", name, img, len);
	free(img);
	if (props_out)
		*props_out = props;
	else
		wc_sst_props_clear(&props);
}

static void
make_sst_seeds(wc_sst_props *p3)
{
	static const seed_cell mixed[] = {
		{"apple", "", INT64_MAX, 9, WC_TYPE_DEL_FAMILY, NULL},
		{"apple", "a", INT64_MAX, 8, WC_TYPE_DEL_COLUMN, NULL},
		{"apple", "a", 20, 7, WC_TYPE_PUT, "red"},
		{"apple", "a", 10, 3, WC_TYPE_PUT, "green"},
		{"apple", "b", 15, 6, WC_TYPE_DEL_VERSION, NULL},
		{"apple", "b", 15, 2, WC_TYPE_PUT, "x"},
		{"banana", "q", 5, 4, WC_TYPE_PUT, "yellow"},
		{"cherry", "q", -3, 5, WC_TYPE_PUT, ""},
		{"cherry", "qq", INT64_MIN, 1, WC_TYPE_PUT, "old"},
	};
	static const seed_cell one[] = {
		{"k", "q", 1, 1, WC_TYPE_PUT, "v"},
	};

	make_sst("one-plain", "cf", WC_COMPRESS_NONE, 0, 0, one, 1, 1, &p3[0]);
	make_sst("mixed-plain", "cf", WC_COMPRESS_NONE, 0, 0, mixed, 9, 1, &p3[1]);
	make_sst("mixed-lz4", "cf", WC_COMPRESS_LZ4, 0, 0, mixed, 9, 1, &p3[2]);
	make_sst("empty", "meta", WC_COMPRESS_NONE, 0, 0, NULL, 0, 1, NULL);
	/* several blocks (small block size), restart points, compressible values */
	make_sst("blocks-lz4", "cf", WC_COMPRESS_LZ4, 512, 0, mixed, 9, 6, NULL);
	make_sst("blocks-plain", "family", WC_COMPRESS_NONE, 256, 4, mixed, 9, 3, NULL);
	make_sst("one-lz4-bloom20", "x", WC_COMPRESS_LZ4, 64, 20, mixed, 9, 2, NULL);
	/* format version 3: zstd frames for the fuzzer to damage behind a valid CRC */
	make_sst("mixed-zstd", "cf", WC_COMPRESS_ZSTD, 0, 0, mixed, 9, 1, NULL);
	make_sst("blocks-zstd", "cf", WC_COMPRESS_ZSTD, 512, 0, mixed, 9, 6, NULL);
}

/* ---------------------------------------------------------------- manifests */

static void
put_manifest(const char *name, const wc_manifest *m)
{
	uint8_t    *buf;
	size_t		len;

	OK(wc_manifest_encode(m, &buf, &len, &e_));
	put_file("manifest", name, buf, len);
	free(buf);
}

static void
make_manifest_seeds(wc_sst_props *p3)
{
	wc_manifest m;
	uint64_t	logs[3] = {4, 7, 12};

	memset(&m, 0, sizeof(m));
	m.version = 1;
	m.next_file = 2;
	m.nlogs = 1;
	m.logs = logs;
	put_manifest("files0", &m);
	m.logs = NULL;
	m.nlogs = 0;
	put_manifest("nologs", &m);

	m.version = 17;
	m.next_file = 13;
	m.last_seq = 250;
	m.truncate_seq = 30;
	m.nlogs = 1;
	m.logs = logs + 2;
	OK(wc_manifest_add_file(&m, 9, &p3[1], &e_));
	put_manifest("files1", &m);
	m.nlogs = 3;
	m.logs = logs;
	OK(wc_manifest_add_file(&m, 10, &p3[0], &e_));
	OK(wc_manifest_add_file(&m, 11, &p3[2], &e_));
	put_manifest("files3", &m);
	m.logs = NULL;
	m.nlogs = 0;
	wc_manifest_clear(&m);
}

/* ----------------------------------------------------------------- options */

/* An input of fuzz_options.c: name NUL value NUL month | day | time_us (LE). */
static void
put_option(const char *seed, const char *name, const char *value,
		   int32_t month, int32_t day, int64_t time_us)
{
	uint8_t		buf[4096];
	size_t		nlen = strlen(name);
	size_t		vlen = strlen(value);
	uint8_t    *p = buf;

	DIE_IF(nlen + vlen + 2 + 16 > sizeof(buf), "option seed %s too long", seed);
	memcpy(p, name, nlen + 1);
	p += nlen + 1;
	memcpy(p, value, vlen + 1);
	p += vlen + 1;
	wc_put_fixed32(p, (uint32_t) month);
	wc_put_fixed32(p + 4, (uint32_t) day);
	wc_put_fixed64(p + 8, (uint64_t) time_us);
	put_file("options", seed, buf, (size_t) (p + 16 - buf));
}

static void
make_options_seeds(void)
{
	char		list[2048];
	size_t		len = 0;

	put_option("webtable", "contents.ttl", "contents,anchor,people", 0, 7, 0);
	put_option("spaces", "anchor.max_versions", " contents ,\tanchor\n, people", 0, 0,
			   INT64_C(36) * 3600 * 1000000);
	put_option("max-versions", "max_versions", "3 ", 0, 0, 0);
	put_option("max-versions-big", "raw.max_versions", "2147483648", 0, -1, 0);
	put_option("compression", "summary.compression", "LZ4", 1, 0, 0);
	put_option("compression-none", "a.b.compression", "None", 0, 0, 999);
	put_option("compression-zstd", "pages.compression", "ZStd", 0, 0, 0);
	put_option("compression-level", "pages.compression_level", "19 ", 0, 0, 0);
	put_option("empty", ".ttl", "a,,b", 0, 0, -1000);
	put_option("twice", "x.y", "raw, summary,raw", 0, 1, -INT64_C(86400000000));

	memset(list, 'f', 256);
	list[256] = '\0';
	put_option("long", "ttl", list, 0, 0, 1000);

	for (int i = 0; i < 65; i++)
		len += (size_t) snprintf(list + len, sizeof(list) - len, "%sf%d", i ? "," : "", i);
	put_option("many", "f64.ttl", list, 0, 0, 0);
}

int
main(int argc, char **argv)
{
	wc_sst_props p3[3];

	DIE_IF(argc != 2, "usage: make_seeds OUTDIR");
	outdir = argv[1];
	DIE_IF(mkdir(outdir, 0755) != 0 && errno != EEXIST, "mkdir %s: %s", outdir, strerror(errno));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wc-seeds-XXXXXX");
	DIE_IF(mkdtemp(tmpdir) == NULL, "mkdtemp: %s", strerror(errno));

	make_batch_seeds();
	make_log_seeds();
	make_sst_seeds(p3);
	make_manifest_seeds(p3);
	make_options_seeds();
	for (int i = 0; i < 3; i++)
		wc_sst_props_clear(&p3[i]);
	rmdir(tmpdir);
	printf("make_seeds: wrote %d files under %s\n", nwritten, outdir);
	return 0;
}
