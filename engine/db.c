/*
 * db.c -- a store handle: opening (and creating) a store, closing it, writing to
 * it, and what it reports about its files.
 *
 * The top of the store core (DESIGN.md, "Layers"): wc_db_write chooses between a
 * log record (write.c) and a bulk write (bulk.c); reading is version.c and
 * scan.c, flushing flush.c, maintenance maintain.c.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

/* ---------------------------------------------------------------- open / close */

/*
 * A store without MANIFEST is new only if it holds no data: a lost MANIFEST next
 * to logs or sorted files is damage, and starting afresh there would later remove
 * those files as orphans.  The one file a crash of the very first creation can
 * leave is 000001.log holding only its header.
 */
static int
check_no_data(wc_db *db, wc_err *err)
{
	char	  **names;
	int			n,
				rc;

	if ((rc = wc_env_list(db->dir, &names, &n, err)) != WC_OK)
		return rc;
	for (int i = 0; i < n && rc == WC_OK; i++)
	{
		const char *dot = strrchr(names[i], '.');
		bool		data = dot && (strcmp(dot, ".log") == 0 || strcmp(dot, ".sst") == 0);

		if (data && strcmp(names[i], "000001.log") == 0)
		{
			char		path[4096];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", db->dir, names[i]);
			data = stat(path, &st) != 0 || st.st_size > WC_LOG_HEADER_SIZE;
		}
		if (data)
			rc = wc_err_set(err, WC_CORRUPT,
							"MANIFEST is missing in a store that holds data (\"%s\" and maybe more)",
							names[i]);
	}
	wc_env_free_list(names, n);
	return rc;
}

/* Writes the first manifest and log of a new store, unless another process did. */
static int
create_store(wc_db *db, wc_err *err)
{
	wc_manifest m;
	char		name[32];
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	if (wc_env_exists(db->dir, "MANIFEST"))
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		return WC_OK;
	}
	if ((rc = check_no_data(db, err)) != WC_OK)
	{
		wc_db_unlock(db, WC_LOCK_MANIFEST);
		return rc;
	}
	memset(&m, 0, sizeof(m));
	m.next_file = 2;
	m.logs = malloc(sizeof(uint64_t));
	if (m.logs == NULL)
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
	else
	{
		m.logs[0] = 1;
		m.nlogs = 1;
		wc_file_name(name, sizeof(name), 1, "log");
		/* a crash may have left the file of an earlier attempt */
		rc = wc_env_unlink(db->dir, name, err);
		if (rc == WC_OK)
			rc = wc_log_create(db->dir, name, 1, err);
		if (rc == WC_OK)
			rc = wc_db_write_manifest(db, &m, err);
	}
	wc_manifest_clear(&m);
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	return rc;
}

int
wc_db_open(const char *dir, const wc_open_opts *opts, wc_db **out, wc_err *err)
{
	wc_db	   *db;
	int			rc;

	*out = NULL;
	if (dir == NULL || opts == NULL)
		return wc_err_set(err, WC_INVALID, "wc_db_open needs a directory and options");
	db = calloc(1, sizeof(wc_db));
	if (db == NULL || (db->dir = strdup(dir)) == NULL)
	{
		free(db);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	db->lockf.fd = -1;
	rc = wc_db_set_options(db, opts, err);
	/* a read-only handle of a store not made yet reads as empty (refresh looks
	 * for it again) and creates nothing, not even LOCK */
	if (rc == WC_OK && opts->read_only && !wc_env_exists(dir, "MANIFEST"))
		db->absent = true;
	else
	{
		bool		create = opts->create_if_missing && !opts->read_only;

		/* every change from here on is reported, the store's creation too */
		if (rc == WC_OK && opts->on_change && !opts->read_only &&
			(rc = wc_env_watch(dir, opts->on_change, opts->on_change_done, opts->on_change_arg, err)) == WC_OK)
			db->watching = true;
		if (rc == WC_OK && create)
			rc = wc_env_mkdir(dir, err);
		if (rc == WC_OK)
		{
			struct stat st;

			if (stat(dir, &st) != 0)
				rc = wc_err_sys(err, "store directory \"%s\" does not exist", dir);
		}
		if (rc == WC_OK)
			rc = wc_db_attach(db, create || opts->read_only, err);
		if (rc == WC_OK && !wc_env_exists(dir, "MANIFEST"))
		{
			if (create)
				rc = create_store(db, err);
			else
				rc = wc_err_set(err, WC_NOT_FOUND, "no store in \"%s\"", dir);
		}
	}
	if (rc == WC_OK && opts->row_cache_bytes > 0 &&
		(db->rowcache = wc_rowcache_new(opts->row_cache_bytes)) == NULL)
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
	if (rc == WC_OK)
		rc = wc_db_refresh(db, err);
	if (rc != WC_OK)
	{
		wc_db_close(db);
		return rc;
	}
	*out = db;
	return WC_OK;
}

void
wc_db_close(wc_db *db)
{
	if (db == NULL)
		return;
	wc_db_view_free(db);
	wc_db_detach(db);
	if (db->watching)
		wc_env_unwatch(db->dir, db->opts.on_change, db->opts.on_change_arg);
	wc_rowcache_free(db->rowcache);
	free(db->fams);
	free(db->dir);
	free(db);
}

int
wc_db_destroy(const char *dir, wc_err *err)
{
	char	  **names;
	int			n,
				rc;

	rc = wc_env_list(dir, &names, &n, err);
	if (rc == WC_NOT_FOUND)
	{
		wc_err_clear(err);
		return WC_OK;
	}
	if (rc != WC_OK)
		return rc;
	for (int i = 0; i < n && rc == WC_OK; i++)
		rc = wc_env_unlink(dir, names[i], err);
	wc_env_free_list(names, n);
	if (rc == WC_OK && rmdir(dir) != 0 && errno != ENOENT)
		rc = wc_err_sys(err, "could not remove store directory \"%s\"", dir);
	return rc;
}

/* ---------------------------------------------------------------- writing */

int
wc_db_write(wc_db *db, wc_batch *const *batches, int n, uint64_t tag, bool sync, wc_err *err)
{
	uint64_t	count = 0;
	size_t		bytes = 0;
	bool		truncates = false;
	uint8_t		hdr[WC_BATCH_HEADER_MAX];
	wc_slice	stack[16];
	wc_slice   *parts = stack;
	uint64_t	seq_base;
	wc_logmem  *active;
	int			rc;

	if ((rc = wc_db_check_writable(db, "write", err)) != WC_OK)
		return rc;
	if (db->failed)
		return wc_err_set(err, WC_FAILED,
						  "the store handle refuses writes after an earlier fsync failure; reopen it");
	for (int i = 0; i < n; i++)
	{
		count += wc_batch_count(batches[i]);
		bytes += wc_batch_bytes(batches[i]);
		truncates |= wc_batch_truncate_seq(batches[i]) != 0;
	}
	if (count == 0)
		return WC_OK;
	if (count > UINT32_MAX)
		return wc_err_set(err, WC_INVALID, "a batch of %llu entries is too large",
						  (unsigned long long) count);
	if (tag != 0 && !truncates && bytes >= db->ingest_bytes)
		return wc_db_write_bulk(db, batches, n, count, tag, sync, err);
	if (tag != 0 && truncates && bytes >= db->ingest_bytes && n > 1)
	{
		/*
		 * A truncate and then a large load (TRUNCATE; COPY in one
		 * transaction): the batches up to the last truncate in a record of
		 * their own, the load after it as a bulk write.  Both records carry
		 * the tag, so they take effect together or not at all, and the
		 * load's entries come after the truncate.  In one record the load
		 * could be larger than a record may be (a logged store's WAL).
		 */
		int			t = n - 1;
		size_t		rest = 0;

		while (wc_batch_truncate_seq(batches[t]) == 0)
			rest += wc_batch_bytes(batches[t--]);
		if (t < n - 1 && rest >= db->ingest_bytes)
		{
			if ((rc = wc_db_write(db, batches, t + 1, tag, sync, err)) != WC_OK)
				return rc;
			return wc_db_write(db, batches + t + 1, n - t - 1, tag, sync, err);
		}
	}
	if (n + 1 > (int) (sizeof(stack) / sizeof(stack[0])) &&
		(parts = malloc(sizeof(wc_slice) * (n + 1))) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");

	/* the record's payload is the header and each batch's entries, in order */
	parts[0].data = hdr;
	parts[0].len = wc_batch_encode_header(hdr, 1, tag, (uint32_t) count);
	for (int i = 0; i < n; i++)
		parts[i + 1].data = wc_batch_entries(batches[i], &parts[i + 1].len);
	rc = wc_db_append(db, parts, n + 1, count, hdr, 0, batches, n, tag, false, &seq_base, &active,
					  err);
	if (parts != stack)
		free(parts);
	if (rc == WC_OK && sync && (rc = wc_file_sync(&active->file, false, err)) != WC_OK)
		db->failed = true;
	return rc;
}

int
wc_db_sync_logs(wc_db *db, wc_err *err)
{
	int			rc = WC_OK;

	if ((rc = wc_db_check_writable(db, "sync", err)) != WC_OK)
		return rc;
	for (int i = 0; i < db->nlogs && rc == WC_OK; i++)
		if ((rc = wc_file_sync(&db->logs[i]->file, false, err)) != WC_OK)
			db->failed = true;
	return rc;
}

/* ---------------------------------------------------------------- statistics */

int
wc_db_files(wc_db *db, wc_file_info **out, int *n, wc_err *err)
{
	wc_file_info *files;
	int			count,
				rc;

	*out = NULL;
	*n = 0;
	/* the list must be current, not up to WC_MANIFEST_CHECK_MS old */
	if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
		return rc;
	/* the manifest's files, then those of committed bulk writes still in a log */
	count = db->manifest.nfiles;
	for (int i = 0; i < db->nlogs; i++)
		count += db->logs[i]->ningested;
	files = calloc(count > 0 ? count : 1, sizeof(wc_file_info));
	if (files == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory");
	for (int i = 0, li = -1, lj = 0; i < count; i++)
	{
		const wc_sst_props *p;
		uint64_t	number;
		wc_file_info *f = &files[i];

		if (i < db->manifest.nfiles)
		{
			p = &db->manifest.files[i].props;
			number = db->manifest.files[i].number;
		}
		else
		{
			while (li < 0 || lj >= db->logs[li]->ningested)
			{
				li++;
				lj = 0;
			}
			number = db->logs[li]->ingested[lj].number;
			p = wc_sst_get_props(db->logs[li]->ingested[lj++].sst);
		}
		wc_file_name(f->name, sizeof(f->name), number, "sst");
		snprintf(f->family, sizeof(f->family), "%s", p->family);
		f->level = p->level;
		f->cells = p->cells;
		f->file_bytes = p->file_bytes;
		f->raw_bytes = p->raw_bytes;
		f->ts_min = p->ts_min;
		f->ts_max = p->ts_max;
		f->row_min = malloc(p->row_min_len ? p->row_min_len : 1);
		f->row_max = malloc(p->row_max_len ? p->row_max_len : 1);
		if (f->row_min == NULL || f->row_max == NULL)
		{
			wc_file_info_free(files, i + 1);
			return wc_err_set(err, WC_NOMEM, "out of memory");
		}
		if (p->row_min_len)
			memcpy(f->row_min, p->row_min, p->row_min_len);
		if (p->row_max_len)
			memcpy(f->row_max, p->row_max, p->row_max_len);
		f->row_min_len = p->row_min_len;
		f->row_max_len = p->row_max_len;
	}
	*out = files;
	*n = count;
	return WC_OK;
}

void
wc_file_info_free(wc_file_info *files, int n)
{
	if (files == NULL)
		return;
	for (int i = 0; i < n; i++)
	{
		free(files[i].row_min);
		free(files[i].row_max);
	}
	free(files);
}

/* Counts sorted file p in stats when it is of family (or family is NULL). */
static void
stats_add_file(wc_db_stats *stats, const wc_sst_props *p, const char *family)
{
	if (family && strcmp(family, p->family) != 0)
		return;
	stats->files++;
	stats->file_cells += p->cells;
	stats->file_bytes += p->file_bytes;
	stats->raw_bytes += p->raw_bytes;
	stats->distinct_rows_est += p->distinct_rows;
}

uint64_t
wc_db_mem_bytes(const wc_db *db)
{
	uint64_t	bytes = 0;

	for (int i = 0; i < db->nlogs; i++)
		for (int j = 0; j < db->logs[i]->nmem; j++)
			bytes += wc_memtable_bytes(db->logs[i]->mem[j].mt);
	return bytes;
}

int
wc_db_get_stats(wc_db *db, const char *family, wc_db_stats *stats, wc_err *err)
{
	memset(stats, 0, sizeof(*stats));
	for (int i = 0; i < db->manifest.nfiles; i++)
		stats_add_file(stats, &db->manifest.files[i].props, family);
	for (int i = 0; i < db->nlogs; i++)
	{
		const wc_logmem *lm = db->logs[i];

		stats->log_bytes += lm->valid_end;
		for (int j = 0; j < lm->ningested; j++)
			stats_add_file(stats, wc_sst_get_props(lm->ingested[j].sst), family);
		for (int j = 0; j < lm->nmem; j++)
		{
			if (family && strcmp(family, lm->mem[j].family) != 0)
				continue;
			stats->mem_cells += wc_memtable_count(lm->mem[j].mt);
			stats->mem_bytes += wc_memtable_size(lm->mem[j].mt);
		}
	}
	/* rows spread over several files are counted once per file: an upper bound */
	stats->distinct_rows_est += stats->mem_cells;
	if (stats->distinct_rows_est > stats->file_cells + stats->mem_cells)
		stats->distinct_rows_est = stats->file_cells + stats->mem_cells;
	return WC_OK;
}
