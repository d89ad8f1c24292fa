/*
 * replica.c -- a directory kept equal to another store's by making, in order, the
 * changes that the other's handles reported (wc.h, wc_change; DESIGN.md,
 * "Replication").  In PostgreSQL, redo on a standby or in recovery.
 *
 * To the store's readers a replica is one more writer: it attaches to LOCK like a
 * handle, appends to a log under the write lock and publishes the log's end on the
 * shared page, and bumps the manifest generation after replacing MANIFEST.  It
 * reads nothing of the store and keeps nothing but the file it wrote last and where
 * the changes it applied left each log's end (wc_replica_cut).
 *
 * Layer 3 of the store core (DESIGN.md, "Layers"): it calls lock.c and, below the
 * core, manifest.c and env.c.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* A log the replica wrote: where the changes it applied left the log's end. */
typedef struct replica_log
{
	uint64_t	number;
	uint64_t	end;
} replica_log;

struct wc_replica
{
	wc_db		db;				/* only what lock.c uses: dir, LOCK, the page */
	wc_file		file;			/* the file written last, kept open */
	replica_log *logs;			/* the logs written to, for wc_replica_cut */
	int			nlogs;
	int			maxlogs;
};

int
wc_replica_open(const char *dir, wc_replica **out, wc_err *err)
{
	wc_replica *r = calloc(1, sizeof(wc_replica));
	int			rc;

	*out = NULL;
	if (r == NULL || (r->db.dir = strdup(dir)) == NULL)
	{
		free(r);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	r->db.lockf.fd = -1;
	r->file.fd = -1;
	/* redo may come to a store whose database directory is gone (dropped later
	 * in the WAL, whose redo then removes it all again), as PostgreSQL's own
	 * redo recreates a missing database directory */
	rc = wc_env_mkdir_parents(dir, err);
	if (rc == WC_OK)
		rc = wc_db_attach(&r->db, true, err);
	if (rc != WC_OK)
	{
		wc_replica_close(r);
		return rc;
	}
	*out = r;
	return WC_OK;
}

void
wc_replica_close(wc_replica *r)
{
	if (r == NULL)
		return;
	wc_file_close(&r->file);
	wc_db_detach(&r->db);
	free(r->logs);
	free(r->db.dir);
	free(r);
}

/* The entry of log number, added if add (NULL if absent, or out of memory). */
static replica_log *
find_log(wc_replica *r, uint64_t number, bool add)
{
	for (int i = 0; i < r->nlogs; i++)
		if (r->logs[i].number == number)
			return &r->logs[i];
	if (!add)
		return NULL;
	if (r->nlogs == r->maxlogs)
	{
		int			n = r->maxlogs ? r->maxlogs * 2 : 8;
		replica_log *logs = realloc(r->logs, sizeof(replica_log) * n);

		if (logs == NULL)
			return NULL;
		r->logs = logs;
		r->maxlogs = n;
	}
	r->logs[r->nlogs].number = number;
	r->logs[r->nlogs].end = 0;
	return &r->logs[r->nlogs++];
}

/* r->file open on name (created if create), or WC_NOT_FOUND. */
static int
open_file(wc_replica *r, const char *name, bool create, wc_err *err)
{
	int			rc;

	if (r->file.fd >= 0 && strcmp(r->file.name, name) == 0)
		return WC_OK;
	wc_file_close(&r->file);
	rc = wc_file_open(r->db.dir, name, WC_OPEN_RDWR, &r->file, err);
	if (rc == WC_NOT_FOUND && create)
	{
		wc_err_clear(err);
		rc = wc_file_open(r->db.dir, name, WC_OPEN_EXCL, &r->file, err);
	}
	return rc;
}

/* The number of a log file's name ("000042.log"), or 0. */
static uint64_t
log_number(const char *name)
{
	size_t		n = strlen(name);
	char	   *end;
	unsigned long long v;

	if (n <= 4 || strcmp(name + n - 4, ".log") != 0)
		return 0;
	errno = 0;
	v = strtoull(name, &end, 10);
	return (errno == 0 && end == name + n - 4) ? (uint64_t) v : 0;
}

/* WRITE or TRUNCATE: under the write lock for a log, whose new end readers learn
 * from the shared page as they would from a writer. */
static int
change_bytes(wc_replica *r, const wc_change *c, wc_err *err)
{
	uint64_t	number = log_number(c->file);
	uint64_t	end = c->offset;
	int			rc;

	if (number > 0 && (rc = wc_db_lock(&r->db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = open_file(r, c->file, true, err);
	if (rc == WC_OK && c->kind == WC_CHANGE_WRITE)
	{
		rc = wc_file_pwritev(&r->file, c->parts, c->nparts, c->offset, err);
		for (int i = 0; i < c->nparts; i++)
			end += c->parts[i].len;
	}
	else if (rc == WC_OK)
		rc = wc_file_truncate(&r->file, c->offset, err);
	if (number > 0 && rc == WC_OK)
	{
		replica_log *lg = find_log(r, number, true);

		/* a write applied again below the end leaves it; a cut sets it */
		if (lg == NULL)
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
		else if (c->kind == WC_CHANGE_TRUNCATE || end > lg->end)
			lg->end = end;
	}
	if (number > 0)
	{
		/* after a failure nobody knows where the log ends: readers look */
		wc_db_shared_set_log(&r->db, rc == WC_OK ? number : 0, rc == WC_OK ? end : 0);
		wc_db_unlock(&r->db, WC_LOCK_WRITE);
	}
	return rc;
}

int
wc_replica_apply(wc_replica *r, const wc_change *c, wc_err *err)
{
	int			rc = WC_OK;

	if (c->file == NULL || c->file[0] == '\0' || strchr(c->file, '/') != NULL ||
		strcmp(c->file, "LOCK") == 0 || strcmp(c->file, "MANIFEST.tmp") == 0)
		return wc_err_set(err, WC_INVALID, "a change names no file of a store: \"%s\"",
						  c->file ? c->file : "");
	switch (c->kind)
	{
		case WC_CHANGE_WRITE:
		case WC_CHANGE_TRUNCATE:
			if (strcmp(c->file, "MANIFEST") == 0)
				return wc_err_set(err, WC_INVALID, "MANIFEST changes only whole");
			return change_bytes(r, c, err);
		case WC_CHANGE_SYNC:
			rc = open_file(r, c->file, false, err);
			if (rc == WC_NOT_FOUND)
			{
				wc_err_clear(err);
				return WC_OK;	/* removed since, or never written */
			}
			return rc == WC_OK ? wc_file_sync(&r->file, false, err) : rc;
		case WC_CHANGE_REMOVE:
			if (strcmp(r->file.name, c->file) == 0)
				wc_file_close(&r->file);
			if (log_number(c->file) > 0)
			{
				replica_log *lg = find_log(r, log_number(c->file), false);

				if (lg != NULL)
					*lg = r->logs[--r->nlogs];
			}
			return wc_env_unlink(r->db.dir, c->file, err);
		case WC_CHANGE_MANIFEST:
			{
				uint8_t    *buf = NULL;
				size_t		len = 0,
							at = 0;

				for (int i = 0; i < c->nparts; i++)
					len += c->parts[i].len;
				if ((buf = malloc(len ? len : 1)) == NULL)
					return wc_err_set(err, WC_NOMEM, "out of memory for a MANIFEST of %zu bytes",
									  len);
				for (int i = 0; i < c->nparts; i++)
				{
					memcpy(buf + at, c->parts[i].data, c->parts[i].len);
					at += c->parts[i].len;
				}
				rc = wc_manifest_write_bytes(r->db.dir, buf, len, err);
				free(buf);
				/* even after a failure: the rename may have happened */
				wc_db_shared_manifest_bump(&r->db);
				return rc;
			}
	}
	return wc_err_set(err, WC_INVALID, "unknown kind of change %d", c->kind);
}

/*
 * After the last change: each log it wrote to is cut where those changes left its
 * end, and synced.  Bytes past that point were written by the store's own handles
 * and never reported as made, so nothing replays them: in PostgreSQL, a commit's
 * log record whose WAL a crash lost (DESIGN.md, "WAL before data").  Where the
 * changes stop is where a copy made from them ends, a standby's for one.
 */
int
wc_replica_cut(wc_replica *r, uint64_t *cut, wc_err *err)
{
	int			rc;

	*cut = 0;
	if (r->nlogs == 0)
		return WC_OK;
	if ((rc = wc_db_lock(&r->db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	for (int i = 0; i < r->nlogs && rc == WC_OK; i++)
	{
		char		name[32];
		uint64_t	size = 0;

		wc_file_name(name, sizeof(name), r->logs[i].number, "log");
		rc = open_file(r, name, false, err);
		if (rc == WC_NOT_FOUND)
		{
			wc_err_clear(err);
			rc = WC_OK;
			continue;
		}
		if (rc == WC_OK)
			rc = wc_file_size(&r->file, &size, err);
		if (rc == WC_OK && size > r->logs[i].end)
		{
			rc = wc_file_truncate(&r->file, r->logs[i].end, err);
			if (rc == WC_OK)
				rc = wc_file_sync(&r->file, false, err);
			if (rc == WC_OK)
				*cut += size - r->logs[i].end;
		}
	}
	/* readers look for the end themselves */
	if (*cut > 0 || rc != WC_OK)
		wc_db_shared_set_log(&r->db, 0, 0);
	wc_db_unlock(&r->db, WC_LOCK_WRITE);
	return rc;
}
