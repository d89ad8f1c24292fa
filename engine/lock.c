/*
 * lock.c -- the file LOCK: its byte locks and its shared page (DESIGN.md, "Locks"
 * and "The shared page").
 *
 * The bottom of the store core: it calls nothing of the others.  Reading the
 * shared page's log end and manifest generation, and releasing a lock, are inline
 * in db_internal.h, since every write and every refresh does them.
 */
#include "db_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

/* How often a handle tries to become the initialiser of a page left half made. */
#define ATTACH_ATTEMPTS		20

/*
 * The write lock is the shared page's robust mutex: taking it costs no system call
 * when nobody holds it.  EOWNERDEAD means its holder died holding it, maybe in the
 * middle of an append: the published log end is then forgotten, so the next writer
 * looks at the file itself (and cuts off a torn tail).
 */
static int
lock_write(wc_db *db, bool wait, wc_err *err)
{
	int			e = wait ? pthread_mutex_lock(&db->shm->write_mutex) :
		pthread_mutex_trylock(&db->shm->write_mutex);

	if (e == 0)
		return WC_OK;
	if (e == EBUSY)
		return WC_BUSY;
	if (e == EOWNERDEAD)
	{
		pthread_mutex_consistent(&db->shm->write_mutex);
		wc_db_shared_set_log(db, 0, 0);
		return WC_OK;
	}
	errno = e;
	return wc_err_sys(err, "could not take the write lock of the store (its shared page in LOCK)");
}

int
wc_db_lock(wc_db *db, int byte, bool wait, wc_err *err)
{
	if (byte == WC_LOCK_WRITE)
		return lock_write(db, wait, err);
	return wc_file_lock(&db->lockf, (uint64_t) byte, true, wait, err);
}

void
wc_db_shared_set_log(wc_db *db, uint64_t number, uint64_t end)
{
	wc_shared  *shm = db->shm;
	uint64_t	c = __atomic_load_n(&shm->log_change, __ATOMIC_RELAXED);

	c += (c & 1);				/* a holder that died mid-change left it odd */
	__atomic_store_n(&shm->log_change, c + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&shm->log_number, number, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->log_end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->log_change, c + 2, __ATOMIC_RELEASE);
}

static int
open_lock_file(wc_db *db, bool create, wc_err *err)
{
	int			rc = wc_file_open(db->dir, "LOCK", WC_OPEN_RDWR, &db->lockf, err);

	if (rc == WC_NOT_FOUND && create)
	{
		wc_err_clear(err);
		rc = wc_file_open(db->dir, "LOCK", WC_OPEN_EXCL, &db->lockf, err);
		if (rc != WC_OK && err->sys_errno == EEXIST)
		{
			wc_err_clear(err);
			rc = wc_file_open(db->dir, "LOCK", WC_OPEN_RDWR, &db->lockf, err);
		}
	}
	return rc;
}

/*
 * A random identity for the store's shared memtables (shmt.h): a store made again
 * at the same place (a new LOCK file) or a copy of one (another file) gets
 * another, so a slot of the old one is never taken for the new one's log.
 */
static uint64_t
new_store_id(void)
{
	static uint64_t counter;
	uint64_t	id = 0;
	struct timespec ts;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t) sizeof(id))
	{
		clock_gettime(CLOCK_REALTIME, &ts);
		id = ((uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec) ^
			((uint64_t) getpid() << 40) ^ (++counter * 0x9E3779B97F4A7C15ull);
	}
	return id != 0 ? id : 1;
}

/*
 * Makes the mapped page new: a free write mutex, nothing published.  The store's
 * identity stays what the page held when the page is whole and was made in this
 * same file (device, inode, the inode's generation): then every handle had only
 * closed the store (a PostgreSQL backend's handles close as its session ends),
 * the slots of the shared memtables index its logs, and the session that opens
 * it next finds them there, instead of indexing the whole active log again in a
 * slot of its own (up to 8 MiB of log, 25-60 ms, each such slot left to fill the
 * region until evicted).  No handle, no change to a log; a crash makes the
 * shared memtables again (PostgreSQL's shared memory), and a log cut or replaced
 * behind the store's back is caught where a slot is found (shmt.c, slot_beyond).
 * A LOCK file made again (a store dropped and made at the same place) starts
 * zeroed, and a copied one (a copied store directory) is another inode: a new
 * identity.
 */
static int
init_shared(wc_db *db, wc_err *err)
{
	pthread_mutexattr_t attr;
	uint64_t	dev,
				ino,
				id = 0;
	uint32_t	gen;
	bool		gen_known;
	int			e,
				rc;

	if ((rc = wc_file_identity(&db->lockf, &dev, &ino, &gen, &gen_known, err)) != WC_OK)
		return rc;
	if (db->shm->magic == WC_SHARED_MAGIC && db->shm->version == WC_SHARED_VERSION &&
		db->shm->lock_dev == dev && db->shm->lock_ino == ino && db->shm->lock_gen == gen)
		id = db->shm->store_id;
	memset(db->shm, 0, sizeof(wc_shared));
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	e = pthread_mutex_init(&db->shm->write_mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	if (e != 0)
	{
		errno = e;
		return wc_err_sys(err, "could not initialise the write lock in \"LOCK\"");
	}
	db->shm->manifest_gen = 1;
	db->shm->store_id = id != 0 ? id : new_store_id();
	db->shm->lock_dev = dev;
	db->shm->lock_ino = ino;
	db->shm->lock_gen = gen;	/* 0 where the file system does not tell it */
	db->shm->version = WC_SHARED_VERSION;
	__atomic_store_n(&db->shm->magic, WC_SHARED_MAGIC, __ATOMIC_RELEASE);
	return WC_OK;
}

/*
 * Every handle holds a shared lock on the attach byte while it is open; a handle
 * that gets it exclusively is alone (the others closed or died: the kernel drops
 * their locks) and (re)initialises the page, then downgrades.  The others wait for
 * the downgrade, so nobody sees a page half made.
 */
int
wc_db_attach(wc_db *db, bool create, wc_err *err)
{
	int			rc;

	if ((rc = open_lock_file(db, create, err)) != WC_OK)
		return rc;
	for (int attempt = 0;; attempt++)
	{
		void	   *addr;
		bool		init;

		rc = wc_file_lock(&db->lockf, WC_LOCK_ATTACH, true, false, err);
		init = rc == WC_OK;
		if (rc == WC_BUSY)
			rc = wc_file_lock(&db->lockf, WC_LOCK_ATTACH, false, true, err);
		if (rc != WC_OK)
			return rc;
		if (db->shm == NULL)
		{
			if ((rc = wc_file_map_shared(&db->lockf, WC_SHARED_BYTES, &addr, err)) != WC_OK)
				return rc;
			db->shm = addr;
		}
		if (init)
		{
			if ((rc = init_shared(db, err)) != WC_OK)
				return rc;
			return wc_file_lock(&db->lockf, WC_LOCK_ATTACH, false, true, err);
		}
		if (__atomic_load_n(&db->shm->magic, __ATOMIC_ACQUIRE) == WC_SHARED_MAGIC &&
			db->shm->version == WC_SHARED_VERSION)
			return WC_OK;
		/* its initialiser died before finishing: try to become the initialiser */
		if (attempt == ATTACH_ATTEMPTS)
			return wc_err_set(err, WC_CORRUPT,
							  "the shared page of \"LOCK\" is not initialised (magic %08x, version %u) "
							  "although another handle has the store open",
							  db->shm->magic, db->shm->version);
		wc_db_unlock(db, WC_LOCK_ATTACH);
		usleep(1000);
	}
}

void
wc_db_detach(wc_db *db)
{
	if (db->shm)
		wc_file_unmap((const uint8_t *) db->shm, WC_SHARED_BYTES);
	db->shm = NULL;
	wc_file_close(&db->lockf);
}
