/*
 * manifest.h -- the list of live files ("MANIFEST"), replaced atomically.
 *
 * The manifest is the only mutable shared description of a store: which logs and
 * sorted files are live, the next file number, the highest sequence number in
 * sorted files, and the truncate point.  It is rewritten whole (MANIFEST.tmp,
 * fsync, rename, fsync directory) by a process holding the manifest lock, so a
 * reader sees either the old or the new one.  Layout: FORMAT.md.
 */
#ifndef WC_MANIFEST_H
#define WC_MANIFEST_H

#include "sst.h"

/*
 * A committed record that some snapshot may not see yet (DESIGN.md, "Snapshots"):
 * the tag of its transaction and the seqs its entries carry.  Kept while the
 * store's horizon has not passed the tag.
 */
typedef struct wc_recent
{
	uint64_t	tag;
	uint64_t	seq_lo;
	uint64_t	seq_hi;
} wc_recent;

typedef struct wc_recent_list
{
	int			n;
	size_t		cap;
	wc_recent  *items;
	uint64_t	forgotten;		/* the highest tag dropped to keep the list bounded
								 * while the horizon was below it; 0 = none */
	uint64_t	pruned_at;		/* the horizon of the last wc_recent_prune since
								 * items came from elsewhere (in memory only) */
} wc_recent_list;

#define WC_RECENT_MAX_DEFAULT	100000

int			wc_recent_add(wc_recent_list *l, uint64_t tag, uint64_t seq_lo, uint64_t seq_hi,
						  wc_err *err);
int			wc_recent_append(wc_recent_list *dst, const wc_recent_list *src, wc_err *err);
/* Drops the entries whose tag is below horizon (the horizon passed them). */
void		wc_recent_prune(wc_recent_list *l, uint64_t horizon);
/* Lists are kept in ascending tag order: wc_recent_sort restores it, and
 * wc_recent_lower_bound gives the first record at or above tag from lo on. */
void		wc_recent_sort(wc_recent_list *l);
int			wc_recent_lower_bound(const wc_recent_list *l, int lo, uint64_t tag);
/* Takes back the record (tag, seq_lo) that wc_recent_add added. */
void		wc_recent_remove(wc_recent_list *l, uint64_t tag, uint64_t seq_lo);
/* Over max entries: forgets the oldest tags down to 3/4 of max (l->forgotten). */
void		wc_recent_bound(wc_recent_list *l, uint32_t max);
/* The lowest seq_lo of the list, or UINT64_MAX when it is empty. */
uint64_t	wc_recent_min_seq(const wc_recent_list *l);
void		wc_recent_clear(wc_recent_list *l);

typedef struct wc_manifest_file
{
	uint64_t	number;			/* the file is NNNNNN.sst */
	wc_sst_props props;
} wc_manifest_file;

typedef struct wc_manifest
{
	uint64_t	version;		/* +1 on every write */
	uint64_t	next_file;		/* next unused file number */
	uint64_t	last_seq;		/* highest seq ever moved out of the logs */
	uint64_t	truncate_seq;	/* entries with a lower seq are gone */
	int			nlogs;
	uint64_t   *logs;			/* live log numbers, oldest first; the last is active */
	int			nfiles;
	wc_manifest_file *files;	/* live sorted files */
	wc_recent_list recent;		/* records flushed into the files that a snapshot
								 * may not see yet, and the forgotten tag (format
								 * version 2) */
} wc_manifest;

/* Reads dir/MANIFEST into *m (caller frees with wc_manifest_clear).  WC_NOT_FOUND
 * when there is none; WC_CORRUPT with details when it is damaged. */
int			wc_manifest_read(const char *dir, wc_manifest *m, wc_err *err);

/* Writes m durably as dir/MANIFEST (through MANIFEST.tmp), reported first to the
 * directory's watcher as one WC_CHANGE_MANIFEST (env.h). */
int			wc_manifest_write(const char *dir, const wc_manifest *m, wc_err *err);

/* Writes an encoded manifest durably as dir/MANIFEST, reporting nothing (a
 * replica's copy of a reported one). */
int			wc_manifest_write_bytes(const char *dir, const uint8_t *buf, size_t len,
									wc_err *err);

/* Encodes / decodes the file image (for tests and the fuzzer). */
int			wc_manifest_encode(const wc_manifest *m, uint8_t **buf, size_t *len, wc_err *err);
int			wc_manifest_decode(const uint8_t *buf, size_t len, wc_manifest *m, wc_err *err);

int			wc_manifest_copy(wc_manifest *dst, const wc_manifest *src, wc_err *err);
void		wc_manifest_clear(wc_manifest *m);

/* Appends a file entry (props deep-copied) / removes the entry with number. */
int			wc_manifest_add_file(wc_manifest *m, uint64_t number, const wc_sst_props *props, wc_err *err);
void		wc_manifest_remove_file(wc_manifest *m, uint64_t number);

#endif
