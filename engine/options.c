/*
 * options.c -- a handle's settings: the open options with their defaults, the
 * family table, the caller's callbacks, and the options they give a sorted file
 * being built.
 *
 * The bottom of the store core beside lock.c: it calls nothing of the others.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

static int
family_cmp(const void *a, const void *b)
{
	const wc_family *fa = a;
	const wc_family *fb = b;

	return wc_row_cmp((const uint8_t *) fa->name, fa->name_len,
					  (const uint8_t *) fb->name, fb->name_len);
}

int
wc_db_set_families(wc_db *db, const wc_family_opts *families, int n, wc_err *err)
{
	wc_family  *fams;

	if (n < 0 || n > WC_MAX_FAMILIES)
		return wc_err_set(err, WC_INVALID, "a store has between 0 and %d families, not %d",
						  WC_MAX_FAMILIES, n);
	fams = calloc(n > 0 ? n : 1, sizeof(wc_family));
	if (fams == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0; i < n; i++)
	{
		size_t		len = families[i].name ? strlen(families[i].name) : 0;

		if (len == 0 || len > WC_MAX_FAMILY)
		{
			free(fams);
			return wc_err_set(err, WC_INVALID, "family name must have 1 to %d bytes",
							  WC_MAX_FAMILY);
		}
		if (families[i].compression != WC_COMPRESS_NONE &&
			families[i].compression != WC_COMPRESS_LZ4 &&
			families[i].compression != WC_COMPRESS_ZSTD)
		{
			free(fams);
			return wc_err_set(err, WC_INVALID, "unknown compression %d for family \"%s\"",
							  families[i].compression, families[i].name);
		}
		if (families[i].compression_level != 0 &&
			(families[i].compression_level < WC_ZSTD_LEVEL_MIN ||
			 families[i].compression_level > WC_ZSTD_LEVEL_MAX))
		{
			free(fams);
			return wc_err_set(err, WC_INVALID,
							  "compression level %d for family \"%s\" is outside %d to %d",
							  families[i].compression_level, families[i].name,
							  WC_ZSTD_LEVEL_MIN, WC_ZSTD_LEVEL_MAX);
		}
		if (families[i].ttl_ms < 0)
		{
			free(fams);
			return wc_err_set(err, WC_INVALID, "negative ttl for family \"%s\"",
							  families[i].name);
		}
		memcpy(fams[i].name, families[i].name, len);
		fams[i].name_len = len;
		fams[i].max_versions = families[i].max_versions;
		fams[i].ttl_ms = families[i].ttl_ms;
		fams[i].compression = families[i].compression;
		fams[i].compression_level = families[i].compression_level ?
			families[i].compression_level : WC_ZSTD_LEVEL_DEFAULT;
	}
	qsort(fams, n, sizeof(wc_family), family_cmp);
	for (int i = 1; i < n; i++)
		if (family_cmp(&fams[i - 1], &fams[i]) == 0)
		{
			int			rc = wc_err_set(err, WC_INVALID, "family \"%s\" is listed twice",
										fams[i].name);

			free(fams);
			return rc;
		}
	free(db->fams);
	db->fams = fams;
	db->nfams = n;
	db->dirty = true;
	return WC_OK;
}

int
wc_db_set_options(wc_db *db, const wc_open_opts *opts, wc_err *err)
{
	db->opts = *opts;
	db->opts.families = NULL;
	db->opts.nfamilies = 0;
	if (db->opts.log_switch_bytes == 0)
		db->opts.log_switch_bytes = WC_DEFAULT_LOG_SWITCH;
	if (db->opts.block_bytes == 0)
		db->opts.block_bytes = WC_DEFAULT_BLOCK;
	if (db->opts.bloom_bits_per_key == 0)
		db->opts.bloom_bits_per_key = WC_DEFAULT_BLOOM;
	if (db->opts.l0_compaction_trigger <= 0)
		db->opts.l0_compaction_trigger = WC_DEFAULT_L0_TRIGGER;
	if (db->opts.recent_max == 0)
		db->opts.recent_max = WC_RECENT_MAX_DEFAULT;
	wc_db_set_ingest_bytes(db, db->opts.ingest_bytes);
	return wc_db_set_families(db, opts->families, opts->nfamilies, err);
}

int
wc_db_check_writable(const wc_db *db, const char *what, wc_err *err)
{
	if (db->opts.read_only)
		return wc_err_set(err, WC_INVALID, "cannot %s: the store is opened read only", what);
	return WC_OK;
}

void
wc_db_set_ingest_bytes(wc_db *db, size_t bytes)
{
	db->ingest_bytes = bytes ? bytes : WC_DEFAULT_INGEST_BYTES;
}

const wc_family *
wc_db_family(const wc_db *db, const uint8_t *name, size_t len)
{
	for (int i = 0; i < db->nfams; i++)
		if (db->fams[i].name_len == len && memcmp(db->fams[i].name, name, len) == 0)
			return &db->fams[i];
	return NULL;
}

void
wc_db_build_opts(wc_db *db, const char *family, int level, wc_sst_build_opts *o)
{
	const wc_family *f = wc_db_family(db, (const uint8_t *) family, strlen(family));

	memset(o, 0, sizeof(*o));
	o->family = family;
	o->level = level;
	o->compression = f ? f->compression : WC_COMPRESS_LZ4;
	o->compression_level = f ? f->compression_level : WC_ZSTD_LEVEL_DEFAULT;
	o->block_bytes = db->opts.block_bytes;
	o->bloom_bits_per_key = db->opts.bloom_bits_per_key;
}

int
wc_db_resolve(wc_db *db, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	if (tag == 0 || db->opts.resolve == NULL)
	{
		*state = WC_TXN_COMMITTED;
		return WC_OK;
	}
	return db->opts.resolve(db->opts.resolve_arg, tag, state, err);
}

int
wc_db_interrupted(wc_db *db)
{
	return db->opts.interrupt != NULL && db->opts.interrupt(db->opts.interrupt_arg);
}
