/*
 * env.c -- POSIX file access with fault injection.
 */

#include "env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#ifdef __linux__
#include <linux/fs.h>			/* FS_IOC_GETVERSION */
#endif
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

static long fault_at[WC_FAULT_NKINDS];
static int	fault_errno[WC_FAULT_NKINDS];
static long fault_calls[WC_FAULT_NKINDS];

static bool map_disabled;

void
wc_fault_set(wc_fault_kind kind, long n, int err_no)
{
	if (kind == WC_FAULT_READ && n > 0)
		map_disabled = true;
	fault_at[kind] = n > 0 ? fault_calls[kind] + n : 0;
	fault_errno[kind] = err_no;
}

long
wc_fault_count(wc_fault_kind kind)
{
	return fault_calls[kind];
}

/* Counts a call of kind; returns true (with errno set) when it must fail. */
static bool
fault_hit(wc_fault_kind kind)
{
	fault_calls[kind]++;
	if (fault_at[kind] != 0 && fault_calls[kind] == fault_at[kind])
	{
		fault_at[kind] = 0;
		errno = fault_errno[kind] ? fault_errno[kind] : EIO;
		return true;
	}
	return false;
}

static int
path_join(char *buf, size_t size, const char *dir, const char *name, wc_err *err)
{
	int			n = snprintf(buf, size, "%s/%s", dir, name);

	if (n < 0 || (size_t) n >= size)
		return wc_err_set(err, WC_INVALID, "path too long: %s/%s", dir, name);
	return WC_OK;
}

/* ---------------------------------------------------------------- change reporting */

/* A watched directory.  Few exist (one per open handle that reports changes). */
struct wc_watch
{
	wc_watch   *next;
	char	   *dir;
	wc_change_fn fn;
	wc_change_done_fn done;
	void	   *arg;
};

static pthread_mutex_t watch_mutex = PTHREAD_MUTEX_INITIALIZER;
static wc_watch *watches;
static int	nwatches;			/* read without the mutex: 0 = nothing to look up */

int
wc_env_watch(const char *dir, wc_change_fn fn, wc_change_done_fn done, void *arg, wc_err *err)
{
	wc_watch   *w = calloc(1, sizeof(wc_watch));

	if (w == NULL || (w->dir = strdup(dir)) == NULL)
	{
		free(w);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	w->fn = fn;
	w->done = done;
	w->arg = arg;
	pthread_mutex_lock(&watch_mutex);
	w->next = watches;
	watches = w;
	__atomic_add_fetch(&nwatches, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&watch_mutex);
	return WC_OK;
}

void
wc_env_unwatch(const char *dir, wc_change_fn fn, void *arg)
{
	wc_watch  **p;

	pthread_mutex_lock(&watch_mutex);
	for (p = &watches; *p; p = &(*p)->next)
	{
		wc_watch   *w = *p;

		if (w->fn == fn && w->arg == arg && strcmp(w->dir, dir) == 0)
		{
			*p = w->next;
			__atomic_sub_fetch(&nwatches, 1, __ATOMIC_RELEASE);
			free(w->dir);
			free(w);
			break;
		}
	}
	pthread_mutex_unlock(&watch_mutex);
}

/* The watch over dir/name, or NULL: none, or a file never reported. */
static const wc_watch *
watch_of(const char *dir, const char *name)
{
	const wc_watch *found = NULL;

	if (__atomic_load_n(&nwatches, __ATOMIC_ACQUIRE) == 0 ||
		strcmp(name, "LOCK") == 0 || strcmp(name, "MANIFEST.tmp") == 0)
		return NULL;
	pthread_mutex_lock(&watch_mutex);
	for (const wc_watch *w = watches; w; w = w->next)
		if (strcmp(w->dir, dir) == 0)
		{
			found = w;
			break;
		}
	pthread_mutex_unlock(&watch_mutex);
	return found;
}

static int
report(const wc_watch *w, int kind, const char *file, uint64_t offset,
	   const wc_slice *parts, int nparts, wc_err *err)
{
	wc_change	c;
	int			rc;

	c.kind = kind;
	c.file = file;
	c.offset = offset;
	c.parts = parts;
	c.nparts = nparts;
	rc = w->fn(w->arg, &c, err);
	if (rc < 0 && err != NULL && err->code == WC_OK)
		wc_err_set(err, rc, "the change of \"%s\" could not be reported", file);
	return rc < 0 ? rc : WC_OK;
}

/* After a reported change was made or failed: passes rc through. */
static int
reported(const wc_watch *w, int rc)
{
	if (w != NULL && w->done != NULL)
		w->done(w->arg);
	return rc;
}

int
wc_env_report(const char *dir, const wc_change *change, wc_err *err)
{
	const wc_watch *w = watch_of(dir, change->file);

	if (w == NULL)
		return WC_OK;
	return report(w, change->kind, change->file, change->offset, change->parts,
				  change->nparts, err);
}

void
wc_env_report_done(const char *dir, const char *file)
{
	(void) reported(watch_of(dir, file), WC_OK);
}

int
wc_file_open(const char *dir, const char *name, int mode, wc_file *f, wc_err *err)
{
	char		path[4096];
	int			flags;
	int			rc;

	f->fd = -1;
	f->watch = NULL;
	snprintf(f->name, sizeof(f->name), "%s", name);
	if ((rc = path_join(path, sizeof(path), dir, name, err)) != WC_OK)
		return rc;
	if (mode != WC_OPEN_READ)
		f->watch = watch_of(dir, name);
	/* a file created or cut to nothing: the copy's must be too */
	if (f->watch && mode == WC_OPEN_CREATE &&
		(rc = report(f->watch, WC_CHANGE_TRUNCATE, name, 0, NULL, 0, err)) != WC_OK)
		return rc;
	switch (mode)
	{
		case WC_OPEN_READ:
			flags = O_RDONLY;
			break;
		case WC_OPEN_RDWR:
			flags = O_RDWR;
			break;
		case WC_OPEN_CREATE:
			flags = O_RDWR | O_CREAT | O_TRUNC;
			break;
		default:
			flags = O_RDWR | O_CREAT | O_EXCL;
			break;
	}
	f->fd = open(path, flags | O_CLOEXEC, 0600);
	rc = f->fd < 0 ? wc_err_sys(err, "could not open file \"%s\"", name) : WC_OK;
	return f->watch && mode == WC_OPEN_CREATE ? reported(f->watch, rc) : rc;
}

void
wc_file_close(wc_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

int
wc_file_pread_some(wc_file *f, void *buf, size_t n, uint64_t off, size_t *got, wc_err *err)
{
	size_t		done = 0;

	if (fault_hit(WC_FAULT_READ))
		return wc_err_sys(err, "could not read file \"%s\" at offset %llu",
						  f->name, (unsigned long long) off);
	while (done < n)
	{
		ssize_t		r = pread(f->fd, (char *) buf + done, n - done, (off_t) (off + done));

		if (r < 0)
		{
			if (errno == EINTR)
				continue;
			return wc_err_sys(err, "could not read file \"%s\" at offset %llu",
							  f->name, (unsigned long long) (off + done));
		}
		if (r == 0)
			break;
		done += (size_t) r;
	}
	*got = done;
	return WC_OK;
}

int
wc_file_pread_once(wc_file *f, void *buf, size_t n, uint64_t off, size_t *got, wc_err *err)
{
	ssize_t		r;

	if (fault_hit(WC_FAULT_READ))
		return wc_err_sys(err, "could not read file \"%s\" at offset %llu",
						  f->name, (unsigned long long) off);
	do
		r = pread(f->fd, buf, n, (off_t) off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return wc_err_sys(err, "could not read file \"%s\" at offset %llu",
						  f->name, (unsigned long long) off);
	*got = (size_t) r;
	return WC_OK;
}

int
wc_file_pread(wc_file *f, void *buf, size_t n, uint64_t off, wc_err *err)
{
	size_t		got;
	int			rc = wc_file_pread_some(f, buf, n, off, &got, err);

	if (rc != WC_OK)
		return rc;
	if (got != n)
		return wc_err_set(err, WC_CORRUPT,
						  "file \"%s\" is truncated: wanted %zu bytes at offset %llu, found %zu",
						  f->name, n, (unsigned long long) off, got);
	return WC_OK;
}

static int
pwrite_all(wc_file *f, const void *buf, size_t n, uint64_t off, wc_err *err)
{
	size_t		done = 0;

	if (fault_hit(WC_FAULT_WRITE))
		return wc_err_sys(err, "could not write file \"%s\" at offset %llu",
						  f->name, (unsigned long long) off);
	while (done < n)
	{
		ssize_t		w = pwrite(f->fd, (const char *) buf + done, n - done, (off_t) (off + done));

		if (w < 0)
		{
			if (errno == EINTR)
				continue;
			return wc_err_sys(err, "could not write file \"%s\" at offset %llu",
							  f->name, (unsigned long long) (off + done));
		}
		done += (size_t) w;
	}
	return WC_OK;
}

int
wc_file_pwrite(wc_file *f, const void *buf, size_t n, uint64_t off, wc_err *err)
{
	wc_slice	s = {buf, n};
	int			rc;

	if (f->watch == NULL)
		return pwrite_all(f, buf, n, off, err);
	if ((rc = report(f->watch, WC_CHANGE_WRITE, f->name, off, &s, 1, err)) != WC_OK)
		return rc;
	return reported(f->watch, pwrite_all(f, buf, n, off, err));
}

/* Writes iov[0..n-1] at *at, resuming after short writes; advances *at. */
static int
pwritev_all(wc_file *f, struct iovec *iov, int n, uint64_t *at, wc_err *err)
{
	int			first = 0;

	while (first < n)
	{
		ssize_t		w = pwritev(f->fd, &iov[first], n - first, (off_t) *at);

		if (w < 0)
		{
			if (errno == EINTR)
				continue;
			return wc_err_sys(err, "could not write file \"%s\" at offset %llu",
							  f->name, (unsigned long long) *at);
		}
		*at += (uint64_t) w;
		while (first < n && (size_t) w >= iov[first].iov_len)
			w -= (ssize_t) iov[first++].iov_len;
		if (first < n)
		{
			iov[first].iov_base = (char *) iov[first].iov_base + w;
			iov[first].iov_len -= (size_t) w;
		}
	}
	return WC_OK;
}

static int
pwritev_parts(wc_file *f, const wc_slice *parts, int nparts, uint64_t off, wc_err *err)
{
	struct iovec iov[64];
	int			n = 0,
				rc;
	uint64_t	at = off;

	if (fault_hit(WC_FAULT_WRITE))
		return wc_err_sys(err, "could not write file \"%s\" at offset %llu",
						  f->name, (unsigned long long) off);
	for (int i = 0; i < nparts; i++)
	{
		if (parts[i].len == 0)
			continue;
		iov[n].iov_base = (void *) parts[i].data;
		iov[n].iov_len = parts[i].len;
		if (++n == 64)
		{
			if ((rc = pwritev_all(f, iov, n, &at, err)) != WC_OK)
				return rc;
			n = 0;
		}
	}
	return n > 0 ? pwritev_all(f, iov, n, &at, err) : WC_OK;
}

int
wc_file_pwritev(wc_file *f, const wc_slice *parts, int nparts, uint64_t off, wc_err *err)
{
	int			rc;

	if (f->watch == NULL)
		return pwritev_parts(f, parts, nparts, off, err);
	if ((rc = report(f->watch, WC_CHANGE_WRITE, f->name, off, parts, nparts, err)) != WC_OK)
		return rc;
	return reported(f->watch, pwritev_parts(f, parts, nparts, off, err));
}

int
wc_file_sync(wc_file *f, bool full, wc_err *err)
{
	int			r;

	if (f->watch && (r = report(f->watch, WC_CHANGE_SYNC, f->name, 0, NULL, 0, err)) != WC_OK)
		return r;
	if (fault_hit(WC_FAULT_SYNC))
		r = wc_err_sys(err, "could not fsync file \"%s\"", f->name);
	else if ((full ? fsync(f->fd) : fdatasync(f->fd)) != 0)
		r = wc_err_sys(err, "could not fsync file \"%s\"", f->name);
	else
		r = WC_OK;
	return f->watch ? reported(f->watch, r) : r;
}

static long size_calls;

long
wc_file_size_calls(void)
{
	return __atomic_load_n(&size_calls, __ATOMIC_RELAXED);
}

int
wc_file_size(wc_file *f, uint64_t *size, wc_err *err)
{
	struct stat st;

	__atomic_fetch_add(&size_calls, 1, __ATOMIC_RELAXED);
	if (fstat(f->fd, &st) != 0)
		return wc_err_sys(err, "could not stat file \"%s\"", f->name);
	*size = (uint64_t) st.st_size;
	return WC_OK;
}

int
wc_file_identity(wc_file *f, uint64_t *dev, uint64_t *ino, uint32_t *gen,
				 bool *gen_known, wc_err *err)
{
	struct stat st;
	int			version = 0;

	if (fstat(f->fd, &st) != 0)
		return wc_err_sys(err, "could not stat file \"%s\"", f->name);
	*dev = (uint64_t) st.st_dev;
	*ino = (uint64_t) st.st_ino;
#ifdef FS_IOC_GETVERSION
	*gen_known = ioctl(f->fd, FS_IOC_GETVERSION, &version) == 0;
#else
	*gen_known = false;
#endif
	*gen = (uint32_t) version;
	return WC_OK;
}

int
wc_file_truncate(wc_file *f, uint64_t size, wc_err *err)
{
	int			rc;

	if (f->watch && (rc = report(f->watch, WC_CHANGE_TRUNCATE, f->name, size, NULL, 0, err)) != WC_OK)
		return rc;
	if (fault_hit(WC_FAULT_WRITE) || ftruncate(f->fd, (off_t) size) != 0)
		rc = wc_err_sys(err, "could not truncate file \"%s\" to %llu bytes",
						f->name, (unsigned long long) size);
	else
		rc = WC_OK;
	return f->watch ? reported(f->watch, rc) : rc;
}

int
wc_env_sync_dir(const char *dir, wc_err *err)
{
	int			fd;

	if (fault_hit(WC_FAULT_SYNC))
		return wc_err_sys(err, "could not fsync directory of the store");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return wc_err_sys(err, "could not open directory of the store");
	if (fsync(fd) != 0)
	{
		int			rc = wc_err_sys(err, "could not fsync directory of the store");

		close(fd);
		return rc;
	}
	close(fd);
	return WC_OK;
}

int
wc_env_rename(const char *dir, const char *from, const char *to, wc_err *err)
{
	char		a[4096],
				b[4096];
	int			rc;

	if ((rc = path_join(a, sizeof(a), dir, from, err)) != WC_OK ||
		(rc = path_join(b, sizeof(b), dir, to, err)) != WC_OK)
		return rc;
	if (fault_hit(WC_FAULT_RENAME) || rename(a, b) != 0)
		return wc_err_sys(err, "could not rename file \"%s\" to \"%s\"", from, to);
	return wc_env_sync_dir(dir, err);
}

int
wc_env_unlink(const char *dir, const char *name, wc_err *err)
{
	char		path[4096];
	int			rc;

	const wc_watch *w;

	if ((rc = path_join(path, sizeof(path), dir, name, err)) != WC_OK)
		return rc;
	if ((w = watch_of(dir, name)) != NULL &&
		(rc = report(w, WC_CHANGE_REMOVE, name, 0, NULL, 0, err)) != WC_OK)
		return rc;
	if (unlink(path) != 0 && errno != ENOENT)
		rc = wc_err_sys(err, "could not remove file \"%s\"", name);
	else
		rc = WC_OK;
	return w ? reported(w, rc) : rc;
}

bool
wc_env_exists(const char *dir, const char *name)
{
	char		path[4096];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int) sizeof(path))
		return false;
	return stat(path, &st) == 0;
}

int
wc_env_mkdir(const char *dir, wc_err *err)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return wc_err_sys(err, "could not create store directory \"%s\"", dir);
	return WC_OK;
}

int
wc_env_mkdir_parents(const char *dir, wc_err *err)
{
	char		path[4096];
	size_t		n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return wc_err_set(err, WC_INVALID, "bad store directory \"%s\"", dir);
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i < n; i++)
	{
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return wc_err_sys(err, "could not create directory \"%s\"", path);
		path[i] = '/';
	}
	return wc_env_mkdir(dir, err);
}

int
wc_env_list(const char *dir, char ***names, int *n, wc_err *err)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	char	  **list = NULL;
	int			count = 0,
				cap = 0;

	*names = NULL;
	*n = 0;
	if (d == NULL)
		return wc_err_sys(err, "could not open store directory \"%s\"", dir);
	while ((de = readdir(d)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (count == cap)
		{
			char	  **grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(list, sizeof(char *) * cap);
			if (grown == NULL)
				goto oom;
			list = grown;
		}
		if ((list[count] = strdup(de->d_name)) == NULL)
			goto oom;
		count++;
	}
	closedir(d);
	*names = list;
	*n = count;
	return WC_OK;

oom:
	closedir(d);
	wc_env_free_list(list, count);
	return wc_err_set(err, WC_NOMEM, "out of memory listing the store directory");
}

void
wc_env_free_list(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int
wc_file_lock(wc_file *f, uint64_t byte, bool exclusive, bool wait, wc_err *err)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t) byte;
	fl.l_len = 1;
	for (;;)
	{
		if (fcntl(f->fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0)
			return WC_OK;
		if (errno == EINTR)
			continue;
		if (!wait && (errno == EAGAIN || errno == EACCES))
			return WC_BUSY;
		return wc_err_sys(err, "could not lock byte %llu of \"%s\"",
						  (unsigned long long) byte, f->name);
	}
}

int
wc_file_unlock(wc_file *f, uint64_t byte, wc_err *err)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t) byte;
	fl.l_len = 1;
	if (fcntl(f->fd, F_OFD_SETLK, &fl) != 0)
		return wc_err_sys(err, "could not unlock byte %llu of \"%s\"",
						  (unsigned long long) byte, f->name);
	return WC_OK;
}

bool
wc_env_map_allowed(void)
{
	/* read once: it is asked at every block read (getenv scans the environment) */
	static int	no_mmap_env = -1;

	if (no_mmap_env < 0)
		no_mmap_env = getenv("WIDECOL_NO_MMAP") != NULL;
	return !map_disabled && !no_mmap_env;
}

int
wc_file_map(wc_file *f, size_t len, const uint8_t **addr, wc_err *err)
{
	void	   *p;

	*addr = NULL;
	if (len == 0 || !wc_env_map_allowed())
		return WC_OK;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, f->fd, 0);
	if (p == MAP_FAILED)
		return WC_OK;			/* not fatal: the caller reads with pread */
	*addr = p;
	return WC_OK;
}

int
wc_file_map_shared(wc_file *f, size_t len, void **addr, wc_err *err)
{
	void	   *p;
	int			e;

	*addr = NULL;
	if ((e = posix_fallocate(f->fd, 0, (off_t) len)) != 0)
	{
		errno = e;
		return wc_err_sys(err, "could not allocate %zu bytes of file \"%s\"", len, f->name);
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (p == MAP_FAILED)
		return wc_err_sys(err, "could not map file \"%s\"", f->name);
	*addr = p;
	return WC_OK;
}

void
wc_file_unmap(const uint8_t *addr, size_t len)
{
	if (addr != NULL)
		munmap((void *) addr, len);
}

int
wc_mapping_new(wc_file *f, size_t len, wc_mapping **out, wc_err *err)
{
	const uint8_t *addr;
	wc_mapping *m;
	int			rc;

	*out = NULL;
	if ((rc = wc_file_map(f, len, &addr, err)) != WC_OK || addr == NULL)
		return rc;
	if ((m = malloc(sizeof(wc_mapping))) == NULL)
	{
		wc_file_unmap(addr, len);
		return wc_err_set(err, WC_NOMEM, "out of memory");
	}
	m->refs = 1;
	m->addr = addr;
	m->len = len;
	*out = m;
	return WC_OK;
}

void
wc_mapping_ref(wc_mapping *m)
{
	m->refs++;
}

void
wc_mapping_unref(wc_mapping *m)
{
	if (m == NULL || --m->refs > 0)
		return;
	wc_file_unmap(m->addr, m->len);
	free(m);
}

int64_t
wc_env_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
wc_env_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool
wc_buf_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t    *p;
	size_t		c = *cap ? *cap : 64;

	if (need <= *cap && *buf != NULL)
		return true;
	while (c < need)
		c *= 2;
	if ((p = realloc(*buf, c)) == NULL)
		return false;
	*buf = p;
	*cap = c;
	return true;
}

bool
wc_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void	  **arr = (void **) arrp;
	void	   *p;
	size_t		c = *cap ? *cap : 8;

	if (need <= *cap && *arr != NULL)
		return true;
	while (c < need && c <= SIZE_MAX / 2)
		c *= 2;
	if (c < need || elem == 0 || c > SIZE_MAX / elem)
		return false;
	if ((p = realloc(*arr, c * elem)) == NULL)
		return false;
	*arr = p;
	*cap = c;
	return true;
}

bool
wc_big_buf_grow(void *bufp, size_t *cap, bool *mapped, size_t need)
{
	void	  **buf = (void **) bufp;
	size_t		c = *cap ? *cap : 64;
	void	   *p;

	if (need <= *cap && *buf != NULL)
		return true;
	while (c < need)
	{
		if (c > SIZE_MAX / 2)
			return false;
		c *= 2;
	}
	if (c < WC_BIG_BUF_MIN)
	{
		if ((p = realloc(*buf, c)) == NULL)
			return false;
		*buf = p;
		*cap = c;
		return true;
	}
	if (*mapped)
	{
		p = mremap(*buf, *cap, c, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			return false;
	}
	else
	{
		p = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return false;
	}
#ifdef MADV_HUGEPAGE
	/* before the new part is touched (mremap keeps the advice of the old part) */
	(void) madvise(p, c, MADV_HUGEPAGE);
#endif
	if (!*mapped)
	{
		if (*buf != NULL)
			memcpy(p, *buf, *cap);
		free(*buf);
		*mapped = true;
	}
	*buf = p;
	*cap = c;
	return true;
}

void
wc_big_buf_free(void *buf, size_t cap, bool mapped)
{
	if (mapped)
		munmap(buf, cap);
	else
		free(buf);
}

bool
wc_helper_start(wc_helper *h, void *(*fn) (void *), void *arg)
{
	sigset_t	all,
				old;

	/* the thread inherits the mask of the thread that creates it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	h->running = pthread_create(&h->thread, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return h->running;
}

void
wc_helper_join(wc_helper *h)
{
	if (h->running)
	{
		pthread_join(h->thread, NULL);
		h->running = false;
	}
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

void
wc_populate_write(void *addr, size_t len)
{
	long		page = sysconf(_SC_PAGESIZE);
	uintptr_t	a = (uintptr_t) addr;
	uintptr_t	start = a - a % (uintptr_t) page;

	/* EINVAL on older kernels, ENOMEM or EFAULT when memory is short: the
	 * writer then faults the pages in itself, as without this */
	(void) madvise((void *) start, len + (a - start), MADV_POPULATE_WRITE);
}

int
wc_env_write_file(const char *dir, const char *name, int mode, const void *data, size_t len,
				  wc_err *err)
{
	wc_file		f;
	int			rc;

	if ((rc = wc_file_open(dir, name, mode, &f, err)) != WC_OK)
		return rc;
	rc = wc_file_pwrite(&f, data, len, 0, err);
	if (rc == WC_OK)
		rc = wc_file_sync(&f, true, err);
	wc_file_close(&f);
	if (rc != WC_OK)
	{
		wc_err		ignored;

		/* we created (or truncated) it: nothing half written stays behind */
		wc_err_clear(&ignored);
		(void) wc_env_unlink(dir, name, &ignored);
	}
	return rc;
}
