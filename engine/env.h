/*
 * env.h -- the one layer through which the engine touches files.
 *
 * Every call names files relative to a store directory and reports failures with
 * that relative name.  Tests make the Nth write, fsync, rename or read fail
 * (wc_fault_set) to exercise every error path, as LevelDB's fault-injection
 * tests do.  A failed fsync is reported as such and is never retried: callers
 * must treat the file's unsynced contents as lost.
 */
#ifndef WC_ENV_H
#define WC_ENV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wc.h"

typedef struct wc_watch wc_watch;

typedef struct wc_file
{
	int			fd;
	char		name[64];		/* relative to the store directory, for messages */
	const wc_watch *watch;		/* its changes are reported (wc_env_watch), or NULL */
} wc_file;

/* Open modes. */
#define WC_OPEN_READ	0		/* existing file, read only */
#define WC_OPEN_RDWR	1		/* existing file, read/write */
#define WC_OPEN_CREATE	2		/* create or truncate, read/write */
#define WC_OPEN_EXCL	3		/* create, fail if it exists */

/*
 * Change reporting (wc.h, wc_change; DESIGN.md, "Replication").  While a directory
 * is watched, every change made through this layer to a file in it is reported to
 * fn before it is made: writes, cuts and syncs of files opened for writing (not
 * opened WC_OPEN_EXCL: such a file is new and empty, and its first write creates
 * it), removals.  LOCK and MANIFEST.tmp are never reported: LOCK holds no data,
 * and whoever writes MANIFEST reports it whole (wc_env_report).  A report that
 * fails fails the change, which is then not made; once a reported change is made
 * (or failed), done, if any, is called.  A watch must outlive the
 * files opened under it; fn runs in the thread making the change.
 */
int			wc_env_watch(const char *dir, wc_change_fn fn, wc_change_done_fn done, void *arg,
						 wc_err *err);
void		wc_env_unwatch(const char *dir, wc_change_fn fn, void *arg);
/* Reports a change to dir's watcher, if it has one; wc_env_report_done after
 * making it (or failing to), when the report succeeded. */
int			wc_env_report(const char *dir, const wc_change *change, wc_err *err);
void		wc_env_report_done(const char *dir, const char *file);

/* Opens dir/name; *f is filled (no allocation). */
int			wc_file_open(const char *dir, const char *name, int mode, wc_file *f, wc_err *err);
void		wc_file_close(wc_file *f);

/* Reads exactly n bytes at off; a short read (end of file) is WC_CORRUPT
 * ("truncated"), since callers only read what a structure says is there. */
int			wc_file_pread(wc_file *f, void *buf, size_t n, uint64_t off, wc_err *err);

/* Reads up to n bytes at off; *got is what was read (0 at end of file). */
int			wc_file_pread_some(wc_file *f, void *buf, size_t n, uint64_t off, size_t *got, wc_err *err);

/* One read of up to n bytes at off (a file being appended to may give fewer). */
int			wc_file_pread_once(wc_file *f, void *buf, size_t n, uint64_t off, size_t *got, wc_err *err);

/* Writes all n bytes at off. */
int			wc_file_pwrite(wc_file *f, const void *buf, size_t n, uint64_t off, wc_err *err);

/* Writes the parts in order, all of them, at off (one pwritev when it can). */
int			wc_file_pwritev(wc_file *f, const wc_slice *parts, int nparts, uint64_t off, wc_err *err);

/* fdatasync (fsync when full).  Failure is final for the caller. */
int			wc_file_sync(wc_file *f, bool full, wc_err *err);
int			wc_file_size(wc_file *f, uint64_t *size, wc_err *err);
/*
 * The device and inode numbers of f (fstat), and the inode's generation where
 * the file system tells it (FS_IOC_GETVERSION: ext4, xfs, btrfs; a number it
 * gives each new inode, so an inode number used again has another): *gen_known
 * false when it does not.
 */
int			wc_file_identity(wc_file *f, uint64_t *dev, uint64_t *ino, uint32_t *gen,
							 bool *gen_known, wc_err *err);
int			wc_file_truncate(wc_file *f, uint64_t size, wc_err *err);

/*
 * Writes a small file whole: creates dir/name (mode WC_OPEN_CREATE, or WC_OPEN_EXCL
 * when it must not exist yet), writes data[0..len-1] and fsyncs it; the directory
 * is not fsynced.  A failure after the open removes the file; a failed open removes
 * nothing (with WC_OPEN_EXCL the file is someone else's).
 */
int			wc_env_write_file(const char *dir, const char *name, int mode, const void *data,
							  size_t len, wc_err *err);

/* rename(dir/from, dir/to) then fsync(dir). */
int			wc_env_rename(const char *dir, const char *from, const char *to, wc_err *err);
int			wc_env_sync_dir(const char *dir, wc_err *err);
/* Unlinks dir/name; a missing file is not an error. */
int			wc_env_unlink(const char *dir, const char *name, wc_err *err);
bool		wc_env_exists(const char *dir, const char *name);
/* mkdir -p of one level (the parent must exist); existing is fine. */
int			wc_env_mkdir(const char *dir, wc_err *err);
/* mkdir -p: dir and every missing directory above it. */
int			wc_env_mkdir_parents(const char *dir, wc_err *err);

/*
 * Lists the names in dir (not "." or "..") into a malloc'd array of malloc'd
 * strings; free with wc_env_free_list.
 */
int			wc_env_list(const char *dir, char ***names, int *n, wc_err *err);
void		wc_env_free_list(char **names, int n);

/*
 * Advisory locks on byte ranges of an open file, owned by the open file description
 * (Linux OFD locks): released when the descriptor closes or the process dies, and
 * independent between handles of one process.  wait=false returns WC_BUSY when held.
 */
int			wc_file_lock(wc_file *f, uint64_t byte, bool exclusive, bool wait, wc_err *err);
int			wc_file_unlock(wc_file *f, uint64_t byte, wc_err *err);

/*
 * Maps the first len bytes of f read-only (*addr; NULL and WC_OK when mapping is
 * off).  Only for immutable files whose size was checked: touching a page past the
 * end of a file truncated behind our back would raise SIGBUS.  Mapping is off once a
 * read fault was ever armed, so injected read failures reach every reader.
 */
int			wc_file_map(wc_file *f, size_t len, const uint8_t **addr, wc_err *err);
void		wc_file_unmap(const uint8_t *addr, size_t len);
/* False once a read fault was armed in this process (readers then use pread). */
bool		wc_env_map_allowed(void);

/*
 * A read-only mapping of a file that grows (a log), held by whatever points into it
 * (memtable entries whose values stay in the log: DESIGN.md, "Values stay in the
 * log").  len may run past the file's end: only bytes below an end the holder read
 * may be touched.  Reference counted like its holders (one thread); unmapped with
 * the last reference.
 */
typedef struct wc_mapping
{
	int			refs;
	const uint8_t *addr;
	size_t		len;
} wc_mapping;

/* Maps the first len bytes of f (*out; NULL and WC_OK when mapping is off or fails). */
int			wc_mapping_new(wc_file *f, size_t len, wc_mapping **out, wc_err *err);
void		wc_mapping_ref(wc_mapping *m);
void		wc_mapping_unref(wc_mapping *m);

/* Whether p[0..len-1] lies within m. */
static inline bool
wc_mapping_holds(const wc_mapping *m, const uint8_t *p, size_t len)
{
	uintptr_t	a = (uintptr_t) m->addr,
				x = (uintptr_t) p;

	return x >= a && len <= m->len && x - a <= m->len - len;
}

/*
 * Makes sure the first len bytes of f are allocated on disk (posix_fallocate: a full
 * disk fails here with WC_NOSPACE rather than later, as SIGBUS, when a shared mapping
 * touches a hole), then maps them read-write and shared (*addr).  Used for LOCK's
 * shared page, which must always be mapped.
 */
int			wc_file_map_shared(wc_file *f, size_t len, void **addr, wc_err *err);

/* Wall-clock time in ms since the Unix epoch (TTL), and a monotonic clock in ms. */
int64_t		wc_env_now_ms(void);
int64_t		wc_env_monotonic_ms(void);

/*
 * Makes *buf (capacity *cap) hold at least need bytes, keeping its contents;
 * false when out of memory (the buffer is then unchanged).
 */
bool		wc_buf_reserve(uint8_t **buf, size_t *cap, size_t need);

/*
 * The same for an array of elements of elem bytes: *arrp (a pointer to the array
 * pointer) gets room for at least need elements, *cap counts elements, growth
 * doubles from 8.  False when out of memory or when the size would overflow (the
 * array is then unchanged).  Use: wc_array_reserve(&v, &cap, n + 1, sizeof(*v)).
 */
bool		wc_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem);

/*
 * A buffer that may grow to hundreds of MiB (a transaction's write batch): *buf holds
 * *cap bytes, *mapped says whether it is an anonymous mapping of its own.  Grows it
 * to hold at least need bytes, keeping its contents (false when out of memory, the
 * buffer then unchanged).  Up to WC_BIG_BUF_MIN it is malloc'd; past it, a mapping
 * asked for huge pages before anything touches it, and grown with mremap: no copy
 * of what it holds, and one page fault per 2 MiB instead of per 4 KiB.  (A realloc
 * of a buffer of glibc's heap copies it, and every fresh 4 KiB page faults: on a
 * virtual machine that was 40% of a bulk COPY.)  Free with wc_big_buf_free.
 */
#define WC_BIG_BUF_MIN	((size_t) 4 << 20)
bool		wc_big_buf_grow(void *bufp, size_t *cap, bool *mapped, size_t need);
void		wc_big_buf_free(void *buf, size_t cap, bool mapped);

/*
 * A helper thread for pure computation inside a caller that may be a PostgreSQL
 * backend: started with every signal blocked (so a backend's handlers keep
 * running in its own thread), it must touch nothing but what it is given: no
 * file of the engine, no callback, no lock.  wc_helper_start sets h->running
 * and returns it: false when no thread could be started (the caller then does
 * the work itself).  wc_helper_join waits for a running one, once.
 */
typedef struct wc_helper
{
	pthread_t	thread;
	bool		running;		/* started, not joined */
} wc_helper;

bool		wc_helper_start(wc_helper *h, void *(*fn) (void *), void *arg);
void		wc_helper_join(wc_helper *h);

/*
 * Makes the pages of [addr, addr + len) resident and writable without changing
 * what they hold (MADV_POPULATE_WRITE, Linux 5.14 on): the kernel's zeroing of
 * fresh pages done ahead, in whichever thread calls it.  Best effort.
 */
void		wc_populate_write(void *addr, size_t len);

/* Fault injection (tests only; process-local). */
/* (Its settings and counters are plain process-wide variables: for tests that do their
 * I/O in one thread.) */
typedef enum wc_fault_kind
{
	WC_FAULT_WRITE = 0,
	WC_FAULT_SYNC,
	WC_FAULT_RENAME,
	WC_FAULT_READ,
	WC_FAULT_NKINDS
} wc_fault_kind;

/*
 * Makes the nth next call of kind (1 = the very next) fail with err_no (EIO,
 * ENOSPC ...); n = 0 disarms.  A failing write writes nothing.
 */
void		wc_fault_set(wc_fault_kind kind, long n, int err_no);
/* Number of calls of kind made so far (for sweeping a test over every call). */
long		wc_fault_count(wc_fault_kind kind);

/* Number of wc_file_size calls (fstat) made by this process so far (tests). */
long		wc_file_size_calls(void);

#endif
