/*
 * make_golden.c -- writes the golden files of the tests (test/golden/README.md).
 *
 *   make_golden DIR WHAT...
 *
 * WHAT is sst-v1, sst-v2, manifest, log-v2, store-zstd, store-bounded or
 * store-bounded-column for a build against this tree
 * (make -C engine build/test/make_golden), and sst-v1 or log-v1 for a build with
 * -DGOLDEN_OLD_TREE against the engine of an older commit whose writers wrote
 * format version 1 by default (the README says which and how).  The contents come
 * from test/golden.h.  It never overwrites a file: remaking one means removing it
 * first, on purpose.  For each file it prints what the tests compare against
 * (size, CRC-32C, the sorted files' block layout, the logs' record ends), to be
 * written into golden.h.  The tests never run it.
 */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifndef GOLDEN_OLD_TREE
#include <zstd.h>
#endif

#include "batch.h"
#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "golden.h"
#include "log.h"
#include "sst.h"
#ifndef GOLDEN_OLD_TREE
#include "ingest.h"
#include "manifest.h"
#endif

static int
fail(const char *what, const wc_err *err)
{
	fprintf(stderr, "make_golden: %s: %s\n", what, err != NULL ? err->msg : "");
	return 1;
}

static uint8_t *
slurp(const char *dir, const char *name, size_t *len)
{
	char		path[4096];
	FILE	   *f;
	long		n;
	uint8_t    *buf;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t) n : 1);
	*len = fread(buf, 1, (size_t) n, f);
	fclose(f);
	return buf;
}

static void
print_file(const char *dir, const char *name)
{
	size_t		len = 0;
	uint8_t    *buf = slurp(dir, name, &len);

	printf("%s: %zu bytes, CRC-32C 0x%08X\n", name, len, buf ? wc_crc32c(buf, len) : 0);
	free(buf);
}

/* Prints the data blocks of a sorted file as {offset, size, type}, from its index. */
static int
print_sst_layout(const char *dir, const char *name, uint32_t want_version)
{
	size_t		len = 0;
	uint8_t    *buf = slurp(dir, name, &len);
	const uint8_t *foot,
			   *p,
			   *end;
	uint64_t	count;
	uint32_t	version;

	if (buf == NULL || len < WC_SST_FOOTER_SIZE)
		return fail(name, NULL);
	foot = buf + len - WC_SST_FOOTER_SIZE;
	version = wc_get_fixed32(foot + 48);
	printf("%s: footer version %u, filter %llu+%llu, properties %llu+%llu, index %llu+%llu\n",
		   name, version,
		   (unsigned long long) wc_get_fixed64(foot), (unsigned long long) wc_get_fixed64(foot + 8),
		   (unsigned long long) wc_get_fixed64(foot + 16), (unsigned long long) wc_get_fixed64(foot + 24),
		   (unsigned long long) wc_get_fixed64(foot + 32), (unsigned long long) wc_get_fixed64(foot + 40));
	if (version != want_version)
	{
		free(buf);
		fprintf(stderr, "make_golden: %s was written as version %u, not %u\n", name, version,
				want_version);
		return 1;
	}
	p = buf + wc_get_fixed64(foot + 32);
	end = p + wc_get_fixed64(foot + 40);
	p = wc_get_varint64(p, end, &count);
	for (uint64_t i = 0; p != NULL && i < count; i++)
	{
		uint64_t	off = 0,
					size = 0,
					n = 0;
		uint32_t	raw_len;
		char	   *raw;

		if ((p = wc_get_varint64(p, end, &off)) == NULL ||
			(p = wc_get_varint64(p, end, &size)) == NULL ||
			(p = wc_get_varint64(p, end, &n)) == NULL ||
			(p = wc_get_varint64(p + n, end, &n)) == NULL ||
			(p = wc_get_varint64(p + n + 8, end, &n)) == NULL)
			break;
		p++;
		/* the restart count: the block's last 4 bytes, once decompressed */
		raw_len = wc_get_fixed32(buf + off + size + 1);
		raw = malloc(raw_len);
		if (buf[off + size] == WC_COMPRESS_LZ4)
			LZ4_decompress_safe((const char *) buf + off, raw, (int) size, (int) raw_len);
#ifndef GOLDEN_OLD_TREE
		else if (buf[off + size] == WC_COMPRESS_ZSTD)
			ZSTD_decompress(raw, raw_len, buf + off, size);
#endif
		else
			memcpy(raw, buf + off, raw_len);
		printf("\t{%llu, %llu, %u},\t/* %u bytes, %u restart points */\n",
			   (unsigned long long) off, (unsigned long long) size, buf[off + size], raw_len,
			   wc_get_fixed32((const uint8_t *) raw + raw_len - 4));
		free(raw);
	}
	free(buf);
	print_file(dir, name);
	return p == NULL ? fail("index", NULL) : 0;
}

/* Writes the sorted file g describes (its name, version, family, level, cells). */
static int
write_sst(const char *dir, const golden_sst *g, int compression, size_t block_bytes)
{
	const char *name = g->name;
	wc_sst_build_opts o;
	wc_sst_builder *b;
	wc_sst_props props;
	wc_err		err;

	memset(&o, 0, sizeof(o));
	o.family = g->props.family;
	o.level = g->props.level;
	o.compression = compression;
	o.block_bytes = block_bytes;
	o.bloom_bits_per_key = 10;
#ifndef GOLDEN_OLD_TREE
	o.version = (int) g->version;
	o.compression_level = WC_ZSTD_LEVEL_DEFAULT;
#endif
	wc_err_clear(&err);
	if ((b = wc_sst_builder_new(dir, name, &o, &err)) == NULL)
		return fail(name, &err);
	for (size_t i = 0; i < g->ncells; i++)
	{
		const golden_cell *gc = &g->cells[i];
		uint8_t    *buf = malloc(gc->val_len + 1);
		wc_cell		c = golden_to_cell(gc, gc->seq, buf);
		int			rc = wc_sst_builder_add(b, &c);

		free(buf);
		if (rc != WC_OK)
			break;
	}
	if (wc_sst_builder_finish(b, &props, &err) != WC_OK)
		return fail(name, &err);
	printf("%s: %llu cells, %llu tombstones, %llu range tombstones, %llu rows, %llu raw bytes, %llu blocks, ts %lld..%lld, seq %llu..%llu\n",
		   name, (unsigned long long) props.cells, (unsigned long long) props.tombstones,
		   (unsigned long long) props.range_tombstones, (unsigned long long) props.distinct_rows,
		   (unsigned long long) props.raw_bytes, (unsigned long long) props.blocks,
		   (long long) props.ts_min, (long long) props.ts_max,
		   (unsigned long long) props.seq_min, (unsigned long long) props.seq_max);
	wc_sst_props_clear(&props);
	return print_sst_layout(dir, name, g->version);
}

/* Appends one record of a golden log at *end. */
static int
append_record(wc_file *f, const golden_record *r, uint64_t *end)
{
	uint8_t		header[WC_BATCH_HEADER_MAX];
	uint8_t    *payload = NULL;
	size_t		len = 0;
	wc_err		err;
	int			rc = WC_OK;

	wc_err_clear(&err);
	if (r->kind == GOLDEN_INGEST)
	{
#ifndef GOLDEN_OLD_TREE
		wc_ingest_record ir;
		wc_ingest_file files[8];

		memset(&ir, 0, sizeof(ir));
		memset(files, 0, sizeof(files));
		ir.seq_base = r->seq_base;
		ir.tag = r->tag;
		ir.count = r->count;
		ir.nfiles = r->nfiles;
		ir.files = files;
		for (int i = 0; i < r->nfiles; i++)
		{
			files[i].number = r->files[i].number;
			strcpy(files[i].family, r->files[i].family);
		}
		if ((rc = wc_ingest_encode(&ir, &payload, &len, &err)) != WC_OK)
			return fail("ingest record", &err);
#else
		return fail("no ingest records before log format version 2", NULL);
#endif
	}
	else
	{
		wc_batch   *b = wc_batch_new();
		const uint8_t *entries;
		size_t		elen,
					hlen;

		for (uint32_t i = 0; r->kind == GOLDEN_BATCH && i < r->count && rc == WC_OK; i++)
		{
			const golden_cell *g = &r->entries[i];
			uint8_t    *vbuf = malloc(g->val_len + 1);
			const uint8_t *val = golden_value(g, vbuf);

			switch (g->type)
			{
				case WC_TYPE_PUT:
					rc = wc_batch_put(b, g->fam, g->fam_len, g->row, g->row_len, g->qual,
									  g->qual_len, g->ts, val, g->val_len, &err);
					break;
				case WC_TYPE_DEL_VERSION:
					rc = wc_batch_delete_version(b, g->fam, g->fam_len, g->row, g->row_len,
												 g->qual, g->qual_len, g->ts, &err);
					break;
				case WC_TYPE_DEL_COLUMN:
#ifndef GOLDEN_OLD_TREE
					if (g->val_len == WC_COLUMN_BOUND_LEN)
					{
						rc = wc_batch_delete_column_upto(b, g->fam, g->fam_len, g->row,
														 g->row_len, g->qual, g->qual_len,
														 wc_get_fixed64(val), &err);
						break;
					}
#endif
					rc = wc_batch_delete_column(b, g->fam, g->fam_len, g->row, g->row_len,
												g->qual, g->qual_len, &err);
					break;
				case WC_TYPE_DEL_FAMILY:
#ifndef GOLDEN_OLD_TREE
					if (g->val_len == WC_FAMILY_BOUND_LEN)
					{
						rc = wc_batch_delete_family_upto(b, g->fam, g->fam_len, g->row,
														 g->row_len, wc_get_fixed64(val), &err);
						break;
					}
#endif
					rc = wc_batch_delete_family(b, g->fam, g->fam_len, g->row, g->row_len, &err);
					break;
				default:
					rc = wc_batch_truncate(b, &err);
					break;
			}
			free(vbuf);
		}
		if (rc != WC_OK)
		{
			wc_batch_free(b);
			return fail("batch", &err);
		}
		entries = wc_batch_entries(b, &elen);
		hlen = wc_batch_encode_header(header, r->seq_base, r->tag, r->count);
		payload = malloc(hlen + elen);
		memcpy(payload, header, hlen);
		memcpy(payload + hlen, entries, elen);
		len = hlen + elen;
		wc_batch_free(b);
	}
	rc = wc_log_append(f, *end, payload, len, end, &err);
	free(payload);
	return rc == WC_OK ? 0 : fail("append", &err);
}

/* Writes the log g describes (its name, number, records), checking its version. */
static int
write_log(const char *dir, const golden_log *g)
{
	const char *name = g->name;
	wc_file		f;
	wc_err		err;
	uint64_t	end = WC_LOG_HEADER_SIZE;
	size_t		len = 0;
	uint8_t    *buf;

	wc_err_clear(&err);
	if (wc_log_create(dir, name, g->number, &err) != WC_OK ||
		wc_file_open(dir, name, WC_OPEN_RDWR, &f, &err) != WC_OK)
		return fail(name, &err);
	for (size_t i = 0; i < g->nrecords; i++)
	{
		if (append_record(&f, &g->records[i], &end) != 0)
			return 1;
		printf("%s: record %zu ends at %llu\n", name, i, (unsigned long long) end);
	}
	if (wc_file_sync(&f, true, &err) != WC_OK)
		return fail(name, &err);
	wc_file_close(&f);
	buf = slurp(dir, name, &len);
	if (buf == NULL || len < 12 || wc_get_fixed32(buf + 8) != g->version)
	{
		fprintf(stderr, "make_golden: %s was written as version %u, not %u\n", name,
				buf && len >= 12 ? wc_get_fixed32(buf + 8) : 0, g->version);
		free(buf);
		return 1;
	}
	free(buf);
	print_file(dir, name);
	return 0;
}

#ifndef GOLDEN_OLD_TREE
/*
 * A store of one sorted file and one log, in dir/name: golden_ssts[which]
 * compressed with compression as 000003.sst, golden_logs[which] as the active log
 * 000002.log, and a MANIFEST naming both (format version 1).
 *
 * store-zstd/: family "data" zstd-compressed (a sorted file of format version 3).
 * store-bounded/: bounded DEL_FAMILY entries beside plain ones in both files (a
 * sorted file of format version 4).
 * store-bounded-column/: bounded DEL_COLUMN entries beside plain ones in both
 * files, and a bounded DEL_FAMILY in the sorted file (format version 5).
 */
static int
write_store(const char *dir, const char *name, int which, int compression)
{
	char		sub[4096];
	char		what[4200];
	wc_manifest m;
	wc_err		err;
	uint64_t	logs[1] = {2};
	wc_sst	   *s;
	int			rc;

	snprintf(sub, sizeof(sub), "%s/%s", dir, name);
	if (mkdir(sub, 0777) != 0)
	{
		fprintf(stderr, "make_golden: cannot create %s (remove it first to remake it)\n", sub);
		return 1;
	}
	if (write_sst(dir, &golden_ssts[which], compression, 512) != 0 ||
		write_log(dir, &golden_logs[which]) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	wc_err_clear(&err);
	m.version = 1;
	m.next_file = 4;
	m.last_seq = 999;
	m.logs = logs;
	m.nlogs = 1;
	if (wc_sst_open(sub, "000003.sst", &s, &err) != WC_OK)
		return fail("000003.sst", &err);
	rc = wc_manifest_add_file(&m, 3, wc_sst_get_props(s), &err);
	wc_sst_unref(s);
	if (rc == WC_OK)
		rc = wc_manifest_write(sub, &m, &err);
	m.logs = NULL;
	m.nlogs = 0;
	wc_manifest_clear(&m);
	snprintf(what, sizeof(what), "%s/MANIFEST", name);
	if (rc != WC_OK)
		return fail(what, &err);
	print_file(sub, "MANIFEST");
	return 0;
}

static int
write_manifest(const char *dir)
{
	wc_manifest m;
	wc_err		err;
	uint64_t	logs[GOLDEN_NELEM(golden_manifest_logs)];
	int			rc = WC_OK;

	memset(&m, 0, sizeof(m));
	wc_err_clear(&err);
	m.version = GOLDEN_MANIFEST_VERSION;
	m.next_file = GOLDEN_MANIFEST_NEXT_FILE;
	m.last_seq = GOLDEN_MANIFEST_LAST_SEQ;
	m.truncate_seq = GOLDEN_MANIFEST_TRUNCATE_SEQ;
	memcpy(logs, golden_manifest_logs, sizeof(logs));
	m.nlogs = (int) GOLDEN_NELEM(golden_manifest_logs);
	m.logs = logs;
	for (size_t i = 0; i < GOLDEN_NELEM(golden_manifest_files) && rc == WC_OK; i++)
	{
		const golden_manifest_file *gf = &golden_manifest_files[i];
		char		name[32];
		wc_sst	   *s;
		wc_sst_props p;

		/* a golden sorted file: its properties as the file has them */
		snprintf(name, sizeof(name), "%06llu.sst", (unsigned long long) gf->number);
		if (wc_env_exists(dir, name))
		{
			if (wc_sst_open(dir, name, &s, &err) != WC_OK)
				return fail(name, &err);
			rc = wc_manifest_add_file(&m, gf->number, wc_sst_get_props(s), &err);
			wc_sst_unref(s);
			continue;
		}
		/* otherwise made up, as golden.h gives it */
		memset(&p, 0, sizeof(p));
		strcpy(p.family, gf->props.family);
		p.level = gf->props.level;
		p.cells = gf->props.cells;
		p.tombstones = gf->props.tombstones;
		p.range_tombstones = gf->props.range_tombstones;
		p.distinct_rows = gf->props.distinct_rows;
		p.raw_bytes = gf->props.raw_bytes;
		p.file_bytes = gf->props.file_bytes;
		p.blocks = gf->props.blocks;
		p.ts_min = gf->props.ts_min;
		p.ts_max = gf->props.ts_max;
		p.seq_min = gf->props.seq_min;
		p.seq_max = gf->props.seq_max;
		p.row_min = (uint8_t *) gf->props.row_min;
		p.row_min_len = gf->props.row_min_len;
		p.row_max = (uint8_t *) gf->props.row_max;
		p.row_max_len = gf->props.row_max_len;
		rc = wc_manifest_add_file(&m, gf->number, &p, &err);
	}
	if (rc != WC_OK)
		return fail("manifest", &err);
	if (wc_env_exists(dir, "MANIFEST"))
	{
		fprintf(stderr, "make_golden: %s/MANIFEST exists; remove it first to remake it\n", dir);
		return 1;
	}
	rc = wc_manifest_write(dir, &m, &err);
	m.logs = NULL;
	m.nlogs = 0;
	wc_manifest_clear(&m);
	if (rc != WC_OK)
		return fail("MANIFEST", &err);
	print_file(dir, "MANIFEST");
	return 0;
}
#endif

int
main(int argc, char **argv)
{
	const char *dir;
	int			bad = 0;

	if (argc < 3)
	{
		fprintf(stderr, "usage: make_golden DIR WHAT... (test/golden/README.md)\n");
		return 2;
	}
	dir = argv[1];
	for (int i = 2; i < argc; i++)
	{
		const char *what = argv[i];

		if (strcmp(what, "sst-v1") == 0)
			bad |= write_sst(dir, &golden_ssts[0], WC_COMPRESS_NONE, 256);
#ifndef GOLDEN_OLD_TREE
		else if (strcmp(what, "sst-v2") == 0)
			bad |= write_sst(dir, &golden_ssts[1], WC_COMPRESS_LZ4, 512);
		else if (strcmp(what, "manifest") == 0)
			bad |= write_manifest(dir);
		else if (strcmp(what, "log-v2") == 0)
			bad |= write_log(dir, &golden_logs[1]);
		else if (strcmp(what, "store-zstd") == 0)
			bad |= write_store(dir, "store-zstd", 2, WC_COMPRESS_ZSTD);
		else if (strcmp(what, "store-bounded") == 0)
			bad |= write_store(dir, "store-bounded", 3, WC_COMPRESS_LZ4);
		else if (strcmp(what, "store-bounded-column") == 0)
			bad |= write_store(dir, "store-bounded-column", 4, WC_COMPRESS_LZ4);
#else
		else if (strcmp(what, "log-v1") == 0)
			bad |= write_log(dir, &golden_logs[0]);
#endif
		else
		{
			fprintf(stderr, "make_golden: cannot make \"%s\" with this build\n", what);
			bad = 1;
		}
	}
	return bad;
}
