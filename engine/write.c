/*
 * write.c -- the commit path: appending one record to the active log under the
 * write lock, and closing and switching logs (DESIGN.md, "Writing").
 *
 * Every write goes through wc_db_append: a batch record (wc_db_write, db.c) and a
 * bulk write's ingest record (bulk.c) alike.  Layer 3 of the store core, its
 * bottom: it calls version.c and lock.c.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

#include "coding.h"
#include "err.h"

int
wc_db_close_log(wc_db *db, wc_logmem *lm, wc_err *err)
{
	uint8_t		marker[WC_BATCH_HEADER_MAX];
	size_t		len;
	uint64_t	end;
	int			rc;

	if (lm->closed)
		return WC_OK;
	if ((rc = wc_log_repair_tail(&lm->file, lm->valid_end, err)) != WC_OK)
		return rc;
	len = wc_batch_encode_header(marker, 0, 0, 0);
	if ((rc = wc_log_append(&lm->file, lm->valid_end, marker, len, &end, err)) != WC_OK)
		return rc;
	lm->valid_end = end;
	wc_log_reader_skip_to(lm->reader, end);
	lm->closed = true;
	wc_db_shared_set_log(db, lm->number, end);
	return WC_OK;
}

/*
 * The order matters: the old log gets its closing marker first, so no writer
 * appends to it once the switch began (a writer reads the marker and looks for
 * the next log); a crash between the marker and the manifest write leaves a
 * closed active log, and the next writer finishes the switch.
 */
int
wc_db_switch_log(wc_db *db, wc_logmem *active, wc_err *err)
{
	wc_manifest m;
	size_t		cap;
	uint64_t	number;
	char		name[32];
	int			rc;

	if ((rc = wc_db_close_log(db, active, err)) != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		return rc;
	memset(&m, 0, sizeof(m));
	if ((rc = wc_db_read_manifest(db, &m, err)) != WC_OK)
		goto out;
	if (m.nlogs == 0 || m.logs[m.nlogs - 1] != active->number)
		goto out;				/* someone finished this switch already */
	number = m.next_file++;
	wc_file_name(name, sizeof(name), number, "log");
	if ((rc = wc_env_unlink(db->dir, name, err)) != WC_OK ||
		(rc = wc_log_create(db->dir, name, number, err)) != WC_OK)
		goto out;
	cap = (size_t) m.nlogs;
	if (!wc_array_reserve(&m.logs, &cap, (size_t) m.nlogs + 1, sizeof(uint64_t)))
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	m.logs[m.nlogs++] = number;
	/* on failure the new log stays: the manifest may name it (orphans are removed later) */
	rc = wc_db_write_manifest(db, &m, err);
	/* we hold the write lock: nobody can have appended to the new log yet, so
	 * readers need not look at it until a writer publishes a new end */
	if (rc == WC_OK)
		wc_db_shared_set_log(db, number, WC_LOG_HEADER_SIZE);
out:
	wc_manifest_clear(&m);
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	return rc;
}

/*
 * Starts a new active log unless the active one is empty.  For a caller whose
 * log records may reach the file before whatever makes them durable elsewhere
 * (PostgreSQL's WAL, src/store.c): after a crash the active log may end with
 * such a record that the WAL lost, which a copy of the store made from the WAL
 * (a standby) does not have; the first write after a restart goes to a new
 * log, so no later record ever follows one of those in a log.
 */
int
wc_db_rotate_log(wc_db *db, wc_err *err)
{
	uint64_t	size = 0;
	int			rc;

	if ((rc = wc_db_check_writable(db, "rotate the log of", err)) != WC_OK)
		return rc;
	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = wc_db_refresh_full(db, err);
	if (rc == WC_OK && db->nlogs == 0)
		rc = wc_err_set(err, WC_CORRUPT, "MANIFEST lists no log");
	if (rc == WC_OK)
	{
		wc_logmem  *active = db->logs[db->nlogs - 1];

		/* a torn tail counts: the switch cuts it (a reported change) */
		if (!active->closed && active->valid_end <= WC_LOG_HEADER_SIZE)
			rc = wc_file_size(&active->file, &size, err);
		if (rc == WC_OK && (active->closed || active->valid_end > WC_LOG_HEADER_SIZE ||
							size > WC_LOG_HEADER_SIZE))
			rc = wc_db_switch_log(db, active, err);
	}
	wc_db_unlock(db, WC_LOCK_WRITE);
	return rc;
}

/*
 * Applies our own record (batches[] after header), whose payload lies at off..end
 * of lm's log, without reading it back: we hold the write lock and appended it at
 * the valid end, so it is exactly what we wrote.  A record with a transaction tag
 * is held until the tag resolves.
 */
static int
apply_own(wc_db *db, wc_logmem *lm, wc_batch *const *batches, int n, const uint8_t *hdr,
		  size_t hdr_len, uint64_t seq_base, uint64_t count, uint64_t tag, uint64_t off,
		  uint64_t end, wc_err *err)
{
	int			rc;

	if (tag != 0)
	{
		size_t		total = hdr_len;
		uint8_t    *payload;

		if ((payload = malloc(end - off)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory");
		memcpy(payload, hdr, hdr_len);
		for (int i = 0; i < n; i++)
		{
			size_t		len;
			const uint8_t *entries = wc_batch_entries(batches[i], &len);

			memcpy(payload + total, entries, len);
			total += len;
		}
		rc = wc_db_hold(lm, tag, seq_base, seq_base + count - 1, payload, total, off, err);
		free(payload);
		return rc;
	}
	{
		wc_batch_reader one,
				   *rs = n == 1 ? &one : malloc(sizeof(wc_batch_reader) * (size_t) n);

		if (rs == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory");
		for (int i = 0; i < n; i++)
		{
			wc_batch_reader_of(&rs[i], batches[i], seq_base);
			seq_base += rs[i].count;
		}
		rc = wc_db_apply_readers(db, lm, rs, n, off, end, err);
		if (rs != &one)
			free(rs);
	}
	return rc;
}

int
wc_db_append(wc_db *db, const wc_slice *parts, int nparts, uint64_t count, uint8_t *seq_field,
			 uint64_t flag, wc_batch *const *batches, int n, uint64_t tag, bool switch_log,
			 uint64_t *seq_base_out, wc_logmem **active_out, wc_err *err)
{
	uint64_t	seq_base,
				new_end;
	wc_logmem  *active;
	int			rc;

	if ((rc = wc_db_lock(db, WC_LOCK_WRITE, true, err)) != WC_OK)
		return rc;
	rc = wc_db_refresh(db, err);
	if (rc == WC_OK && db->nlogs == 0)
		rc = wc_err_set(err, WC_CORRUPT, "MANIFEST lists no log");
	if (rc == WC_OK && db->logs[db->nlogs - 1]->closed)
	{
		/* a switch was cut short (a crash after the marker): finish it */
		rc = wc_db_switch_log(db, db->logs[db->nlogs - 1], err);
		if (rc == WC_OK)
			rc = wc_db_refresh_full(db, err);
		if (rc == WC_OK && db->logs[db->nlogs - 1]->closed)
			rc = wc_err_set(err, WC_CORRUPT, "the active log is closed after a log switch");
	}
	if (rc != WC_OK)
		goto out;
	active = db->logs[db->nlogs - 1];
	{
		uint64_t	number,
					size;

		/*
		 * The last writer published where it left the log; if that is not known
		 * (first write to this log since the store was opened, a failed append, a
		 * writer that died holding the lock), look at the file: a writer that died
		 * mid-append left a torn tail, cut it off.
		 */
		if (!wc_db_shared_get_log(db, &number, &size) || number != active->number ||
			size != active->valid_end)
		{
			if ((rc = wc_file_size(&active->file, &size, err)) != WC_OK ||
				(size > active->valid_end &&
				 (rc = wc_log_repair_tail(&active->file, active->valid_end, err)) != WC_OK))
				goto out;
		}
	}

	seq_base = db->manifest.last_seq;
	for (int i = 0; i < db->nlogs; i++)
		if (db->logs[i]->max_seq > seq_base)
			seq_base = db->logs[i]->max_seq;
	if (db->applied_seq > seq_base)
		seq_base = db->applied_seq;
	seq_base++;
	wc_put_fixed64(seq_field, seq_base | flag);

	rc = wc_log_appendv(&active->file, active->valid_end, parts, nparts, &new_end, err);
	if (rc != WC_OK)
	{
		wc_err		ignored;

		/* leave no partial record behind for the next writer to judge */
		wc_err_clear(&ignored);
		(void) wc_file_truncate(&active->file, active->valid_end, &ignored);
		wc_db_shared_set_log(db, 0, 0);
		goto out;
	}
	wc_db_shared_set_log(db, active->number, new_end);
	if (seq_base + count - 1 > active->max_seq)
		active->max_seq = seq_base + count - 1;
	{
		uint64_t	old_end = active->valid_end;
		int			arc;

		active->valid_end = new_end;
		wc_log_reader_skip_to(active->reader, new_end);
		if (batches != NULL)
			arc = apply_own(db, active, batches, n, parts[0].data, parts[0].len, seq_base, count,
							tag, old_end + WC_LOG_RECORD_HEADER, new_end, err);
		else
			arc = wc_db_hold(active, tag, seq_base, seq_base + count - 1, parts[0].data,
							 parts[0].len, new_end - parts[0].len, err);
		db->dirty = true;
		if (arc != WC_OK)
		{
			/* the record is written; only our view lags: read it back next time */
			active->valid_end = old_end;
			wc_log_reader_skip_to(active->reader, old_end);
			wc_err_clear(err);
		}
	}
	if (switch_log || new_end >= db->opts.log_switch_bytes)
	{
		wc_err		serr;

		/* the record is written; a failed switch only delays the flush */
		wc_err_clear(&serr);
		(void) wc_db_switch_log(db, active, &serr);
	}
	*seq_base_out = seq_base;
	*active_out = active;
out:
	wc_db_unlock(db, WC_LOCK_WRITE);
	return rc;
}
