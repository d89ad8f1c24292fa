/*
 * compact.c -- merging a family's sorted files into one, and choosing which files
 * a minor compaction merges.
 *
 * A compaction takes all sorted files of the family, or (wc_db_maintain) a group
 * of them whose rowkey ranges overlap and that no other file of the family
 * overlaps.  Either way it sees every entry of the rows it covers that a tombstone
 * in them could mask (the logs hold only newer sequence numbers), so it keeps what
 * the visibility step says in its compaction mode (visible.h): what a reader sees,
 * and the DEL_VERSION entries that still hold a place within max_versions.  Or
 * (wc_db_maintain) the newest size tier of such a group, older files left out: a
 * partial compaction, which keeps the tombstones as well.
 *
 * Layer 3 of the store core: it calls version.c, lock.c, options.c and visible.c.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "visible.h"

#define INTERRUPT_EVERY 4096

int
wc_db_compact_family(wc_db *db, const char *family, const uint64_t *only, int nonly,
					 bool partial, wc_err *err)
{
	wc_version *v = NULL;
	wc_iter   **children = NULL;
	wc_iter    *merge = NULL;
	uint64_t   *inputs = NULL;
	int			ninputs = 0;
	wc_sst_builder *b = NULL;
	wc_sst_build_opts o;
	wc_sst_props props;
	wc_vis_rules rules;
	wc_vis		vis;
	wc_manifest m;
	uint64_t	number = 0,
				until_check = INTERRUPT_EVERY;
	char		name[32];
	int			rc;
	bool		output_made = false;

	memset(&m, 0, sizeof(m));
	memset(&props, 0, sizeof(props));
	if ((rc = wc_db_refresh_full(db, err)) != WC_OK)
		return rc;
	if ((v = wc_db_version(db, err)) == NULL)
		return err->code;
	/* what an older snapshot may need stays (DESIGN.md, "Snapshots") */
	wc_db_compact_rules(db, family, partial, db->manifest.truncate_seq, NULL, &rules);
	wc_vis_init(&vis, &rules);

	/* inputs: every sorted file of the family, as in the manifest we refreshed to */
	inputs = calloc(db->nssts > 0 ? db->nssts : 1, sizeof(uint64_t));
	children = calloc(db->nssts > 0 ? db->nssts : 1, sizeof(wc_iter *));
	if (inputs == NULL || children == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < db->nssts; i++)
	{
		bool		wanted = only == NULL;

		if (strcmp(wc_sst_get_props(db->ssts[i].sst)->family, family) != 0)
			continue;
		for (int j = 0; j < nonly && !wanted; j++)
			wanted = only[j] == db->ssts[i].number;
		if (!wanted)
			continue;
		if ((children[ninputs] = wc_sst_iter_new(db->ssts[i].sst, NULL)) == NULL)
		{
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
			goto out;
		}
		inputs[ninputs++] = db->ssts[i].number;
	}
	if (ninputs == 0)
		goto out;
	merge = wc_merge_iter_new(children, ninputs);
	free(children);
	children = NULL;
	if (merge == NULL)
	{
		rc = wc_err_set(err, WC_NOMEM, "out of memory");
		goto out;
	}

	if ((rc = wc_db_reserve_numbers(db, 1, &number, err)) != WC_OK)
		goto out;
	wc_file_name(name, sizeof(name), number, "sst");
	wc_db_build_opts(db, family, 1, &o);
	if ((b = wc_sst_builder_new(db->dir, name, &o, err)) == NULL)
	{
		rc = err->code;
		goto out;
	}
	for (wc_iter_seek_first(merge); wc_iter_valid(merge); wc_iter_next(merge))
	{
		const wc_cell *c = wc_iter_cell(merge);
		int			verdict;

		if (--until_check == 0)
		{
			until_check = INTERRUPT_EVERY;
			if (wc_db_interrupted(db))
			{
				rc = wc_err_set(err, WC_ABORTED, "compaction interrupted");
				goto out;
			}
		}
		verdict = wc_vis_step(&vis, c);
		if (verdict < 0)
		{
			rc = wc_err_set(err, verdict, "out of memory");
			goto out;
		}
		if (verdict == WC_VIS_EMIT && (rc = wc_sst_builder_add(b, c)) != WC_OK)
			break;
	}
	if ((rc = wc_iter_status(merge, err)) != WC_OK)
		goto out;
	rc = wc_sst_builder_finish(b, &props, err);
	b = NULL;
	if (rc != WC_OK)
		goto out;
	output_made = true;

	/* swap inputs for the output, if nobody compacted them meanwhile */
	if ((rc = wc_db_lock(db, WC_LOCK_MANIFEST, true, err)) != WC_OK)
		goto out;
	rc = wc_db_read_manifest(db, &m, err);
	for (int i = 0; rc == WC_OK && i < ninputs; i++)
	{
		bool		found = false;

		for (int j = 0; j < m.nfiles; j++)
			if (m.files[j].number == inputs[i])
				found = true;
		if (!found)
			rc = wc_err_set(err, WC_BUSY, "a file of family \"%s\" was replaced during compaction",
							family);
	}
	if (rc == WC_OK)
	{
		for (int i = 0; i < ninputs; i++)
			wc_manifest_remove_file(&m, inputs[i]);
		if (props.cells > 0)
			rc = wc_manifest_add_file(&m, number, &props, err);
	}
	if (rc == WC_OK)
	{
		rc = wc_db_write_manifest(db, &m, err);
		/* after a failed write the manifest may name the output: keep it */
		if (rc != WC_OK)
			output_made = false;
	}
	wc_db_unlock(db, WC_LOCK_MANIFEST);
	if (rc == WC_OK)
	{
		wc_err		ignored;

		/* scans that hold the inputs keep reading them through open descriptors */
		wc_err_clear(&ignored);
		for (int i = 0; i < ninputs; i++)
		{
			wc_file_name(name, sizeof(name), inputs[i], "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
		if (props.cells == 0)
		{
			wc_file_name(name, sizeof(name), number, "sst");
			(void) wc_env_unlink(db->dir, name, &ignored);
		}
		output_made = false;
		rc = wc_db_refresh_full(db, err);
	}

out:
	if (b)
		wc_sst_builder_abandon(b);
	if (output_made)
	{
		wc_err		ignored;

		wc_err_clear(&ignored);
		wc_file_name(name, sizeof(name), number, "sst");
		(void) wc_env_unlink(db->dir, name, &ignored);
	}
	if (children)
	{
		for (int i = 0; i < ninputs; i++)
			wc_iter_close(children[i]);
		free(children);
	}
	wc_iter_close(merge);
	wc_sst_props_clear(&props);
	wc_manifest_clear(&m);
	free(inputs);
	wc_vis_free(&vis);
	wc_version_unref(v);
	return rc;
}

/* ---------------------------------------------------------------- choosing */

typedef struct span
{
	const wc_manifest_file *f;
} span;

static int
span_cmp_min(const void *a, const void *b)
{
	const wc_sst_props *x = &((const span *) a)->f->props,
			   *y = &((const span *) b)->f->props;

	return wc_row_cmp(x->row_min, x->row_min_len, y->row_min, y->row_min_len);
}

/* An end point of a file's rowkey range, for the depth sweep. */
typedef struct endpoint
{
	const uint8_t *row;
	uint32_t	len;
	int			delta;			/* +1 start, -1 end */
} endpoint;

static int
endpoint_cmp(const void *a, const void *b)
{
	const endpoint *x = a,
			   *y = b;
	int			c = wc_row_cmp(x->row, x->len, y->row, y->len);

	/* starts before ends at one rowkey: [a,b] and [b,c] share row b */
	return c != 0 ? c : y->delta - x->delta;
}

/* The most files of spans[0..n-1] whose rowkey ranges hold one rowkey. */
static int
max_depth(const span *spans, int n, endpoint *ep)
{
	int			depth = 0,
				best = 0;

	for (int i = 0; i < n; i++)
	{
		const wc_sst_props *p = &spans[i].f->props;

		ep[2 * i] = (endpoint) {p->row_min, p->row_min_len, +1};
		ep[2 * i + 1] = (endpoint) {p->row_max, p->row_max_len, -1};
	}
	qsort(ep, (size_t) n * 2, sizeof(endpoint), endpoint_cmp);
	for (int i = 0; i < 2 * n; i++)
		if ((depth += ep[i].delta) > best)
			best = depth;
	return best;
}

/* A group deeper than this is compacted whole even when its tiers would wait. */
#define TIER_DEPTH_MAX	32

static int
span_cmp_newest(const void *a, const void *b)
{
	const wc_sst_props *x = &((const span *) a)->f->props,
			   *y = &((const span *) b)->f->props;

	return x->seq_max < y->seq_max ? 1 : x->seq_max > y->seq_max ? -1 : 0;
}

/*
 * Size tiers (DESIGN.md, "Flush and compaction"): orders the n files of a group
 * newest first and returns how many of the newest make a tier: each next older
 * file joins while it is at most twice the size of those taken so far.  Their
 * merge may leave the older files out (a partial compaction) when every one of
 * those is older than all of the tier (seq ranges apart); -1 when they are not,
 * and the group must be compacted whole.  n when the tier is the whole group.
 * Files of interleaved series all overlap: merging the whole group every time a
 * rowkey lies in 4 files rewrote everything flushed so far at every compaction;
 * tiers rewrite each entry about once per doubling of the data.
 */
static int
newest_tier(span *spans, int n)
{
	uint64_t	sum,
				tier_min;
	int			take = 1;

	qsort(spans, (size_t) n, sizeof(span), span_cmp_newest);
	sum = spans[0].f->props.file_bytes;
	tier_min = spans[0].f->props.seq_min;
	while (take < n && spans[take].f->props.file_bytes <= 2 * sum)
	{
		sum += spans[take].f->props.file_bytes;
		if (spans[take].f->props.seq_min < tier_min)
			tier_min = spans[take].f->props.seq_min;
		take++;
	}
	for (int k = take; k < n; k++)
		if (spans[k].f->props.seq_max >= tier_min)
			return -1;
	return take;
}

/*
 * Compacts, in family, each group of files with overlapping rowkey ranges in which
 * some rowkey lies in trigger or more files (what a point read may have to open):
 * the group's newest size tier when it holds trigger files or more and is older
 * than nothing left out (partial: tombstones kept), else the whole group once
 * its tiers cannot be told apart or it is deeper than TIER_DEPTH_MAX (otherwise
 * it waits for more flushes).  Files that overlap nothing stay as they are, so
 * rows written in key order are not rewritten again and again.  A family of more
 * than WC_COMPACT_MAX_FILES files is compacted whole.  With run false, only
 * tells: 1 when there is work, else 0.  Caller holds the compact lock when run is
 * true.
 */
int
wc_db_compact_some(wc_db *db, const char *family, int trigger, bool run, wc_err *err)
{
	const wc_manifest *m = &db->manifest;
	span	   *spans;
	endpoint   *ep;
	uint64_t   *numbers;
	int			n = 0,
				rc = WC_OK;

	for (int i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].props.family, family) == 0 && m->files[i].props.row_min != NULL)
			n++;
	if (n < trigger)
		return WC_OK;
	if (n > WC_COMPACT_MAX_FILES)
		return run ? wc_db_compact_family(db, family, NULL, 0, false, err) : 1;
	spans = calloc((size_t) n, sizeof(span));
	ep = calloc((size_t) n * 2, sizeof(endpoint));
	numbers = calloc((size_t) n, sizeof(uint64_t));
	if (spans == NULL || ep == NULL || numbers == NULL)
	{
		free(spans);
		free(ep);
		free(numbers);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	n = 0;
	for (int i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].props.family, family) == 0 && m->files[i].props.row_min != NULL)
			spans[n++].f = &m->files[i];
	qsort(spans, (size_t) n, sizeof(span), span_cmp_min);

	/*
	 * Groups: runs of files (by smallest rowkey) each starting at or before the
	 * largest rowkey seen so far in the run.  The numbers are copied first: each
	 * compaction rewrites db->manifest, which spans point into.
	 */
	{
		int			ngroups = 0;
		int		   *bounds = calloc((size_t) n * 3, sizeof(int));	/* [start, end), partial */

		if (bounds == NULL)
			rc = wc_err_set(err, WC_NOMEM, "out of memory");
		for (int i = 0; rc == WC_OK && i < n;)
		{
			const uint8_t *hi = spans[i].f->props.row_max;
			uint32_t	hi_len = spans[i].f->props.row_max_len;
			int			j = i + 1,
						depth;

			while (j < n && wc_row_cmp(spans[j].f->props.row_min, spans[j].f->props.row_min_len,
									   hi, hi_len) <= 0)
			{
				if (wc_row_cmp(spans[j].f->props.row_max, spans[j].f->props.row_max_len,
							   hi, hi_len) > 0)
				{
					hi = spans[j].f->props.row_max;
					hi_len = spans[j].f->props.row_max_len;
				}
				j++;
			}
			if (j - i >= trigger && (depth = max_depth(spans + i, j - i, ep)) >= trigger)
			{
				int			take = newest_tier(spans + i, j - i);

				/* the newest tier alone, or the whole group (see newest_tier) */
				if (take >= trigger && take < j - i)
				{
					bounds[3 * ngroups] = i;
					bounds[3 * ngroups + 1] = i + take;
					bounds[3 * ngroups + 2] = 1;
					ngroups++;
				}
				else if (take == j - i || take < 0 || depth > TIER_DEPTH_MAX)
				{
					bounds[3 * ngroups] = i;
					bounds[3 * ngroups + 1] = j;
					bounds[3 * ngroups + 2] = 0;
					ngroups++;
				}
			}
			i = j;
		}
		for (int i = 0; i < n; i++)
			numbers[i] = spans[i].f->number;
		if (!run && rc == WC_OK)
			rc = ngroups > 0;
		for (int g = 0; run && rc == WC_OK && g < ngroups; g++)
			rc = wc_db_compact_family(db, family, numbers + bounds[3 * g],
									  bounds[3 * g + 1] - bounds[3 * g], bounds[3 * g + 2] != 0,
									  err);
		free(bounds);
	}
	free(spans);
	free(ep);
	free(numbers);
	return rc;
}
