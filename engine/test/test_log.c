/*
 * test_log.c -- log framing: round trip, incremental reads, recovery from a cut at
 * every offset, corruption of every byte, a reader racing a writer process, and
 * the golden logs of both format versions (test/golden) read with today's readers.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include "batch.h"
#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "golden.h"
#include "ingest.h"
#include "log.h"
#include "testutil.h"

#define REC_HDR 9

/*
 * With t_map, readers are given a mapping of their file (as a store's logs are:
 * records larger than the read-ahead window are then checked by reads and
 * returned in the mapping).
 */
#define T_MAP_LEN	((size_t) 64 << 20)
static bool t_map;

/*
 * With t_whole too, readers are told that the file's bytes at their making are
 * whole records (as the end a writer published: wc_log_reader_set_whole), which
 * they then read in the mapping; damage there must still be found and reported
 * as by reads.
 */
static bool t_whole;
static struct
{
	wc_log_reader *r;
	const uint8_t *addr;
} t_maps[8];

static wc_log_reader *
t_reader_new(wc_file *f, uint64_t off)
{
	wc_log_reader *r = wc_log_reader_new(f, off);
	const uint8_t *addr = NULL;
	wc_err		err;

	wc_err_clear(&err);
	if (r == NULL || !t_map || wc_file_map(f, T_MAP_LEN, &addr, &err) != WC_OK || addr == NULL)
		return r;
	wc_log_reader_set_map(r, addr, T_MAP_LEN);
	if (t_whole)
	{
		uint64_t	size = 0;

		if (wc_file_size(f, &size, &err) == WC_OK)
			wc_log_reader_set_whole(r, size);
	}
	for (int i = 0; i < 8; i++)
		if (t_maps[i].r == NULL)
		{
			t_maps[i].r = r;
			t_maps[i].addr = addr;
			return r;
		}
	fprintf(stderr, "too many mapped readers\n");
	exit(2);
}

/* The mapping of r, or NULL. */
static const uint8_t *
t_reader_map(const wc_log_reader *r)
{
	for (int i = 0; i < 8; i++)
		if (t_maps[i].r == r)
			return t_maps[i].addr;
	return NULL;
}

static void
t_reader_free(wc_log_reader *r)
{
	for (int i = 0; i < 8; i++)
		if (t_maps[i].r == r && r != NULL)
		{
			wc_file_unmap(t_maps[i].addr, T_MAP_LEN);
			t_maps[i].r = NULL;
		}
	wc_log_reader_free(r);
}

/* Deterministic payload bytes for record (seed, len). */
static void
fill_payload(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t	s = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < len; i++)
	{
		if ((i & 7) == 0)
			(void) test_rand(&s);
		buf[i] = (uint8_t) (s >> ((i & 7) * 8));
	}
}

static bool
payload_ok(const uint8_t *p, size_t len, size_t want_len, uint64_t seed)
{
	uint8_t    *want;
	bool		ok;

	if (len != want_len)
		return false;
	want = malloc(want_len ? want_len : 1);
	fill_payload(want, want_len, seed);
	ok = memcmp(p, want, want_len) == 0;
	free(want);
	return ok;
}

static uint64_t
file_bytes(wc_file *f)
{
	uint64_t	size = 0;
	wc_err		err;

	wc_err_clear(&err);
	if (wc_file_size(f, &size, &err) != WC_OK)
		return UINT64_MAX;
	return size;
}

/* Appends record (seed, len) at *end. */
static int
append_rec(wc_file *f, uint64_t *end, uint64_t seed, size_t len, wc_err *err)
{
	uint8_t    *buf = malloc(len ? len : 1);
	int			rc;

	fill_payload(buf, len, seed);
	rc = wc_log_append(f, *end, buf, len, end, err);
	free(buf);
	return rc;
}

/* Round trip of many records, and reading only what was appended since. */
static void
test_roundtrip(void)
{
	char	   *dir = test_tmpdir("log");
	wc_file		f;
	wc_err		err;
	uint64_t	number = 0,
				end = WC_LOG_HEADER_SIZE,
				rs = 42;
	size_t		sizes[80];
	uint64_t	ends[80];
	wc_log_reader *r;
	const uint8_t *payload;
	size_t		len;
	uint64_t	rend;
	int			n = 0,
				rc;

	wc_err_clear(&err);
	CHECK_OK(wc_log_create(dir, "000007.log", 7, &err), &err);
	wc_err_clear(&err);
	CHECK(wc_log_create(dir, "000007.log", 7, &err) != WC_OK, "create over an existing log");
	wc_err_clear(&err);
	CHECK_OK(wc_file_open(dir, "000007.log", WC_OPEN_RDWR, &f, &err), &err);
	CHECK(file_bytes(&f) == WC_LOG_HEADER_SIZE, "new log is only a header");
	CHECK_OK(wc_log_check_header(&f, &number, &err), &err);
	CHECK(number == 7, "number %llu", (unsigned long long) number);

	for (int i = 0; i < 60; i++)
	{
		size_t		sz;

		if (i == 0 || i == 17)
			sz = 0;
		else if (i == 5)
			sz = (2u << 20) + 13;	/* > 1 MiB */
		else if (i == 30)
			sz = 1u << 20;
		else
			sz = (size_t) (test_rand(&rs) % (i % 3 == 0 ? 70000 : 300));
		sizes[i] = sz;
		CHECK_OK(append_rec(&f, &end, (uint64_t) i, sz, &err), &err);
		ends[i] = end;
	}
	n = 60;
	CHECK(file_bytes(&f) == end, "file size matches the last end");

	r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
	CHECK(r != NULL, "reader");
	for (int i = 0; i < n; i++)
	{
		rc = wc_log_read(r, &payload, &len, &rend, &err);
		CHECK(rc == 1, "record %d: rc=%d %s", i, rc, err.msg);
		if (rc != 1)
			break;
		CHECK(payload_ok(payload, len, sizes[i], (uint64_t) i), "record %d payload (len %zu, want %zu)",
			  i, len, sizes[i]);
		CHECK(rend == ends[i], "record %d end %llu want %llu", i,
			  (unsigned long long) rend, (unsigned long long) ends[i]);
	}
	rc = wc_log_read(r, &payload, &len, &rend, &err);
	CHECK(rc == 0, "end of log: rc=%d %s", rc, err.msg);
	rc = wc_log_read(r, &payload, &len, &rend, &err);
	CHECK(rc == 0, "end of log again: rc=%d %s", rc, err.msg);
	CHECK(wc_log_reader_offset(r) == end, "reader offset at the end");

	/* more appends: only the new ones are returned */
	for (int i = 60; i < 80; i++)
	{
		sizes[i] = (size_t) (test_rand(&rs) % 1000);
		CHECK_OK(append_rec(&f, &end, (uint64_t) i, sizes[i], &err), &err);
		ends[i] = end;
		if (i % 7 == 0)
		{
			rc = wc_log_read(r, &payload, &len, &rend, &err);
			CHECK(rc == 1 && payload_ok(payload, len, sizes[n], (uint64_t) n) && rend == ends[n],
				  "interleaved record %d: rc=%d", n, rc);
			n++;
		}
	}
	while ((rc = wc_log_read(r, &payload, &len, &rend, &err)) == 1)
	{
		CHECK(n < 80 && payload_ok(payload, len, sizes[n], (uint64_t) n) && rend == ends[n],
			  "new record %d", n);
		n++;
	}
	CHECK(rc == 0, "end after new records: rc=%d %s", rc, err.msg);
	CHECK(n == 80, "read %d of 80 records", n);

	/* a reader starting in the middle */
	t_reader_free(r);
	r = t_reader_new(&f, ends[69]);
	rc = wc_log_read(r, &payload, &len, &rend, &err);
	CHECK(rc == 1 && payload_ok(payload, len, sizes[70], 70) && rend == ends[70], "read from the middle");
	t_reader_free(r);

	/* nothing to repair */
	CHECK_OK(wc_log_repair_tail(&f, end, &err), &err);
	CHECK(file_bytes(&f) == end, "repair of a clean log keeps it");

	wc_file_close(&f);
	test_rmdir(dir);
}

/* Reads a whole file into memory. */
static uint8_t *
slurp(wc_file *f, size_t *len)
{
	uint64_t	size = file_bytes(f);
	uint8_t    *buf = malloc(size ? size : 1);
	wc_err		err;

	wc_err_clear(&err);
	if (wc_file_pread(f, buf, size, 0, &err) != WC_OK)
	{
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	*len = size;
	return buf;
}

/* Replaces dir/name's contents with img[0..len-1]. */
static void
put_image(const char *dir, const char *name, const uint8_t *img, size_t len, wc_file *f)
{
	wc_err		err;

	wc_err_clear(&err);
	if (wc_file_open(dir, name, WC_OPEN_CREATE, f, &err) != WC_OK ||
		(len > 0 && wc_file_pwrite(f, img, len, 0, &err) != WC_OK))
	{
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
}

/* Builds a log of nrec records of the given sizes; returns its image and ends. */
static uint8_t *
make_log(const char *dir, const size_t *sizes, int nrec, uint64_t *ends, size_t *img_len)
{
	wc_file		f;
	wc_err		err;
	uint64_t	end = WC_LOG_HEADER_SIZE;
	uint8_t    *img;

	wc_err_clear(&err);
	(void) wc_env_unlink(dir, "000001.log", &err);
	CHECK_OK(wc_log_create(dir, "000001.log", 1, &err), &err);
	CHECK_OK(wc_file_open(dir, "000001.log", WC_OPEN_RDWR, &f, &err), &err);
	for (int i = 0; i < nrec; i++)
	{
		CHECK_OK(append_rec(&f, &end, (uint64_t) i + 100, sizes[i], &err), &err);
		ends[i] = end;
	}
	img = slurp(&f, img_len);
	wc_file_close(&f);
	return img;
}

/* Cut the log at every offset: the reader sees exactly the whole records before it. */
static void
test_recovery(void)
{
	char	   *dir = test_tmpdir("logcut");
	const size_t sizes[] = {0, 10, 300, 37, 1};
	const int	nrec = 5;
	uint64_t	ends[5];
	size_t		img_len;
	uint8_t    *img = make_log(dir, sizes, nrec, ends, &img_len);
	int			bad = 0;

	for (size_t cut = img_len;; cut--)
	{
		wc_file		f;
		wc_err		err;
		wc_log_reader *r;
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend,
					number,
					valid_end = WC_LOG_HEADER_SIZE;
		int			want = 0,
					got = 0,
					rc;

		for (int i = 0; i < nrec; i++)
			if (ends[i] <= cut)
			{
				want = i + 1;
				valid_end = ends[i];
			}
		put_image(dir, "000001.log", img, cut, &f);
		wc_err_clear(&err);
		CHECK_OK(wc_log_check_header(&f, &number, &err), &err);
		r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
		while ((rc = wc_log_read(r, &payload, &len, &rend, &err)) == 1)
		{
			if (got >= nrec || !payload_ok(payload, len, sizes[got], (uint64_t) got + 100) ||
				rend != ends[got])
				bad++;
			got++;
		}
		if (rc != 0 || got != want || wc_log_reader_offset(r) != valid_end)
		{
			bad++;
			fprintf(stderr, "cut %zu: rc=%d got %d want %d: %s\n", cut, rc, got, want, err.msg);
		}
		/* and again: still nothing, no error */
		if (wc_log_read(r, &payload, &len, &rend, &err) != 0)
			bad++;
		t_reader_free(r);

		rc = wc_log_repair_tail(&f, valid_end, &err);
		if (rc != WC_OK || file_bytes(&f) != valid_end)
		{
			bad++;
			fprintf(stderr, "cut %zu: repair rc=%d size %llu: %s\n", cut, rc,
					(unsigned long long) file_bytes(&f), err.msg);
		}
		/* after the repair a writer can append and a reader sees it */
		{
			uint64_t	end = valid_end;

			r = t_reader_new(&f, valid_end);
			if (append_rec(&f, &end, 999, 5, &err) != WC_OK ||
				wc_log_read(r, &payload, &len, &rend, &err) != 1 ||
				!payload_ok(payload, len, 5, 999) || rend != end)
				bad++;
			t_reader_free(r);
		}
		wc_file_close(&f);
		if (cut == WC_LOG_HEADER_SIZE)
			break;
	}
	CHECK(bad == 0, "%d failures over %zu cuts", bad, img_len - WC_LOG_HEADER_SIZE + 1);

	/* a header cut short is corrupt, not an empty log */
	{
		wc_file		f;
		wc_err		err;
		uint64_t	number;

		put_image(dir, "000001.log", img, WC_LOG_HEADER_SIZE - 1, &f);
		wc_err_clear(&err);
		CHECK(wc_log_check_header(&f, &number, &err) == WC_CORRUPT, "short header: %s", err.msg);
		wc_file_close(&f);
	}
	free(img);
	test_rmdir(dir);
}

/* Flip every byte of the middle record, of the last one, and of the header. */
static void
test_corruption(void)
{
	char	   *dir = test_tmpdir("logbad");
	const size_t sizes[] = {50, 61, 71};
	uint64_t	ends[3];
	size_t		img_len;
	uint8_t    *img = make_log(dir, sizes, 3, ends, &img_len);
	const uint8_t masks[] = {0x01, 0x80, 0xff};
	int			bad = 0,
				corrupt_checks = 0,
				torn_checks = 0;

	for (int m = 0; m < 3; m++)
	{
		for (uint64_t pos = ends[0]; pos < ends[2]; pos++)
		{
			bool		last = pos >= ends[1];
			wc_file		f;
			wc_err		err;
			wc_log_reader *r;
			const uint8_t *payload;
			size_t		len;
			uint64_t	rend;
			int			rc;

			img[pos] ^= masks[m];
			put_image(dir, "000001.log", img, img_len, &f);
			img[pos] ^= masks[m];
			wc_err_clear(&err);
			r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
			rc = wc_log_read(r, &payload, &len, &rend, &err);
			if (rc != 1 || !payload_ok(payload, len, sizes[0], 100))
				bad++;
			rc = wc_log_read(r, &payload, &len, &rend, &err);
			if (!last)
			{
				/* damage followed by a valid record: never a payload, never "end" */
				corrupt_checks++;
				if (rc != WC_CORRUPT || strstr(err.msg, "000001.log") == NULL ||
					strstr(err.msg, "offset") == NULL)
				{
					bad++;
					fprintf(stderr, "flip 0x%02x at %llu: rc=%d %s\n", masks[m],
							(unsigned long long) pos, rc, err.msg);
				}
				/* the reader stays put and says so again */
				wc_err_clear(&err);
				if (wc_log_read(r, &payload, &len, &rend, &err) != WC_CORRUPT ||
					wc_log_reader_offset(r) != ends[0])
					bad++;
				wc_err_clear(&err);
				if (wc_log_repair_tail(&f, ends[0], &err) != WC_CORRUPT ||
					file_bytes(&f) != img_len)
				{
					bad++;
					fprintf(stderr, "repair after flip at %llu: %s\n", (unsigned long long) pos, err.msg);
				}
			}
			else
			{
				/* a damaged last record looks like a torn tail */
				torn_checks++;
				if (rc != 1 || !payload_ok(payload, len, sizes[1], 101))
					bad++;
				rc = wc_log_read(r, &payload, &len, &rend, &err);
				if (rc != 0)
				{
					bad++;
					fprintf(stderr, "flip 0x%02x in last record at %llu: rc=%d %s\n", masks[m],
							(unsigned long long) pos, rc, err.msg);
				}
				if (wc_log_repair_tail(&f, wc_log_reader_offset(r), &err) != WC_OK ||
					file_bytes(&f) != ends[1])
					bad++;
			}
			t_reader_free(r);
			wc_file_close(&f);
		}
	}
	CHECK(bad == 0, "%d failures (%d corrupt, %d torn cases)", bad, corrupt_checks, torn_checks);

	/* a valid record where the caller thinks the end is: refuse to truncate */
	{
		wc_file		f;
		wc_err		err;

		put_image(dir, "000001.log", img, img_len - 1, &f);
		wc_err_clear(&err);
		CHECK(wc_log_repair_tail(&f, ends[0], &err) == WC_CORRUPT, "stale valid end: %s", err.msg);
		CHECK(file_bytes(&f) == img_len - 1, "nothing truncated");
		wc_file_close(&f);
	}

	/* header */
	bad = 0;
	for (int pos = 0; pos < WC_LOG_HEADER_SIZE; pos++)
	{
		wc_file		f;
		wc_err		err;
		uint64_t	number;

		img[pos] ^= 0x10;
		put_image(dir, "000001.log", img, img_len, &f);
		img[pos] ^= 0x10;
		wc_err_clear(&err);
		if (wc_log_check_header(&f, &number, &err) != WC_CORRUPT ||
			strstr(err.msg, "000001.log") == NULL)
		{
			bad++;
			fprintf(stderr, "header flip at %d: %s\n", pos, err.msg);
		}
		wc_file_close(&f);
	}
	CHECK(bad == 0, "%d header flips not detected", bad);

	/* a huge damaged length must not make the reader allocate it */
	{
		wc_file		f;
		wc_err		err;
		wc_log_reader *r;
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend;

		wc_put_fixed32(img + ends[0] + 4, (1u << 30) - 1);
		put_image(dir, "000001.log", img, img_len, &f);
		wc_err_clear(&err);
		r = t_reader_new(&f, ends[0]);
		CHECK(wc_log_read(r, &payload, &len, &rend, &err) == WC_CORRUPT, "big length: %s", err.msg);
		t_reader_free(r);
		wc_file_close(&f);
	}
	free(img);
	test_rmdir(dir);
}

/*
 * Records larger than the read-ahead window, read with a mapped reader and without:
 * valid ones come back (in the mapping when mapped: no copy), damage followed by a
 * valid record is WC_CORRUPT, a damaged or cut last record is the end for now, and
 * a released reader reads on where it stopped.
 */
static void
test_large_records(void)
{
	char	   *dir = test_tmpdir("loglarge");
	const size_t sizes[] = {70000, 300001, 65536 - 9, 150000};
	uint64_t	ends[4];
	size_t		img_len;
	uint8_t    *img = make_log(dir, sizes, 4, ends, &img_len);
	const uint64_t flips[] = {ends[0] + 4, ends[0] + 9, ends[0] + 150000, ends[1] - 1};
	int			bad = 0;

	for (int pass = 0; pass < 2; pass++)
	{
		wc_file		f;
		wc_err		err;
		wc_log_reader *r;
		const uint8_t *payload,
				   *map;
		size_t		len;
		uint64_t	rend;
		int			rc;

		put_image(dir, "000001.log", img, img_len, &f);
		r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
		map = t_reader_map(r);
		CHECK(t_map == (map != NULL), "mapped as asked");
		for (int i = 0; i < 4; i++)
		{
			wc_err_clear(&err);
			rc = wc_log_read(r, &payload, &len, &rend, &err);
			CHECK(rc == 1 && payload_ok(payload, len, sizes[i], 100 + (uint64_t) i) &&
				  rend == ends[i], "large record %d: rc=%d %s", i, rc, err.msg);
			if (rc == 1 && map != NULL && sizes[i] > 65536 - 9)
				CHECK(payload == map + ends[i] - sizes[i], "record %d returned in the mapping", i);
			/* the second time, buffers released after every record */
			if (pass == 1)
				wc_log_reader_release(r);
		}
		CHECK(wc_log_read(r, &payload, &len, &rend, &err) == 0, "end after the large records");
		t_reader_free(r);
		wc_file_close(&f);
	}

	for (int k = 0; k < 4; k++)
	{
		wc_file		f;
		wc_err		err;
		wc_log_reader *r;
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend;
		int			rc;

		img[flips[k]] ^= 0x20;
		put_image(dir, "000001.log", img, img_len, &f);
		img[flips[k]] ^= 0x20;
		r = t_reader_new(&f, ends[0]);
		wc_err_clear(&err);
		rc = wc_log_read(r, &payload, &len, &rend, &err);
		if (rc != WC_CORRUPT || wc_log_reader_offset(r) != ends[0])
		{
			bad++;
			fprintf(stderr, "flip at %llu of a large record: rc=%d %s\n",
					(unsigned long long) flips[k], rc, err.msg);
		}
		t_reader_free(r);
		wc_file_close(&f);
	}
	CHECK(bad == 0, "%d damaged large records not reported", bad);

	/* the last record damaged, or cut anywhere: the end for now */
	bad = 0;
	for (uint64_t cut = ends[2];; cut += cut < ends[2] + 64 ? 1 : 4999)
	{
		wc_file		f;
		wc_err		err;
		wc_log_reader *r;
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend;
		int			rc;
		bool		flip;

		if (cut > img_len)
			cut = img_len;
		flip = cut == img_len;	/* whole, but damaged */

		if (flip)
			img[ends[2] + 70000] ^= 0x01;
		put_image(dir, "000001.log", img, flip ? img_len : (size_t) cut, &f);
		if (flip)
			img[ends[2] + 70000] ^= 0x01;
		r = t_reader_new(&f, ends[2]);
		wc_err_clear(&err);
		rc = wc_log_read(r, &payload, &len, &rend, &err);
		if (rc != 0 || wc_log_reader_offset(r) != ends[2])
		{
			bad++;
			fprintf(stderr, "last record cut at %llu%s: rc=%d %s\n", (unsigned long long) cut,
					flip ? " (damaged)" : "", rc, err.msg);
		}
		t_reader_free(r);
		wc_file_close(&f);
		if (flip)
			break;
	}
	CHECK(bad == 0, "%d cut or damaged last records not read as the end", bad);
	free(img);
	test_rmdir(dir);
}

#define RACE_RECORDS 2000

static size_t
race_size(int i)
{
	if (i % 97 == 0)
		return 300000 + (size_t) i;	/* large enough to be seen half-written */
	return (size_t) ((i * 7919) % 3000);
}

/* A reader in this process, a writer in a child, on one log. */
static void
test_concurrent(void)
{
	char	   *dir = test_tmpdir("lograce");
	wc_file		f;
	wc_err		err;
	wc_log_reader *r;
	pid_t		pid;
	int			n = 0,
				bad = 0,
				status = 0,
				rc = 0;
	time_t		start;

	wc_err_clear(&err);
	CHECK_OK(wc_log_create(dir, "000003.log", 3, &err), &err);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
	{
		wc_file		wf;
		uint64_t	end = WC_LOG_HEADER_SIZE;

		if (wc_file_open(dir, "000003.log", WC_OPEN_RDWR, &wf, &err) != WC_OK)
			_exit(3);
		for (int i = 0; i < RACE_RECORDS; i++)
		{
			if (append_rec(&wf, &end, (uint64_t) i, race_size(i), &err) != WC_OK)
				_exit(4);
			if (i % 50 == 0)
				usleep(200);
		}
		wc_file_close(&wf);
		_exit(0);
	}
	CHECK(pid > 0, "fork");
	CHECK_OK(wc_file_open(dir, "000003.log", WC_OPEN_READ, &f, &err), &err);
	r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
	start = time(NULL);
	while (n < RACE_RECORDS && time(NULL) - start < 120)
	{
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend;

		rc = wc_log_read(r, &payload, &len, &rend, &err);
		if (rc < 0)
			break;
		if (rc == 0)
			continue;
		if (!payload_ok(payload, len, race_size(n), (uint64_t) n))
			bad++;
		n++;
	}
	CHECK(rc >= 0, "reader error: %s", err.msg);
	CHECK(n == RACE_RECORDS && bad == 0, "read %d records, %d bad", n, bad);
	if (n < RACE_RECORDS)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer status %d", status);
	{
		const uint8_t *payload;
		size_t		len;
		uint64_t	rend;

		CHECK(wc_log_read(r, &payload, &len, &rend, &err) == 0, "nothing after the last record");
	}
	t_reader_free(r);
	wc_file_close(&f);
	test_rmdir(dir);
}

/* Appends refuse oversized records and report write failures. */
static void
test_errors(void)
{
	char	   *dir = test_tmpdir("logerr");
	wc_file		f;
	wc_err		err;
	uint64_t	end = WC_LOG_HEADER_SIZE;
	uint8_t		b = 0;
	int			rc;

	wc_err_clear(&err);
	CHECK_OK(wc_log_create(dir, "000002.log", 2, &err), &err);
	CHECK_OK(wc_file_open(dir, "000002.log", WC_OPEN_RDWR, &f, &err), &err);
	rc = wc_log_append(&f, end, &b, (1u << 30) + 1, &end, &err);
	CHECK(rc == WC_INVALID && end == WC_LOG_HEADER_SIZE, "oversized record: rc=%d", rc);
	wc_err_clear(&err);
	wc_fault_set(WC_FAULT_WRITE, 1, EIO);
	rc = wc_log_append(&f, end, &b, 1, &end, &err);
	CHECK(rc == WC_IO && strstr(err.msg, "000002.log") != NULL, "write fault: rc=%d %s", rc, err.msg);
	wc_file_close(&f);

	/* a failed create leaves no file behind */
	wc_err_clear(&err);
	wc_fault_set(WC_FAULT_SYNC, 1, EIO);
	rc = wc_log_create(dir, "000004.log", 4, &err);
	CHECK(rc == WC_IO && !wc_env_exists(dir, "000004.log"), "create with sync fault: rc=%d", rc);
	test_rmdir(dir);
}

/*
 * Format versions: wc_log_create writes version 2 (ingest records may follow); a
 * version 1 header, as the first builds wrote it (golden bytes below), is still
 * read; version 3 is refused.
 */
static void
test_versions(void)
{
	char	   *dir = test_tmpdir("logver");
	static const uint8_t v1_head[20] = {'W', 'C', 'L', 'O', 'G', 0x0d, 0x0a, 0x1a,
		1, 0, 0, 0,				/* version 1 */
	9, 0, 0, 0, 0, 0, 0, 0};	/* log number 9 */
	uint8_t		h[WC_LOG_HEADER_SIZE];
	wc_file		f;
	uint64_t	number = 0;
	wc_err		err;

	wc_err_clear(&err);
	CHECK_OK(wc_log_create(dir, "000008.log", 8, &err), &err);
	CHECK_OK(wc_file_open(dir, "000008.log", WC_OPEN_READ, &f, &err), &err);
	CHECK_OK(wc_file_pread(&f, h, sizeof(h), 0, &err), &err);
	CHECK(wc_get_fixed32(h + 8) == 2, "a new log is version %u", wc_get_fixed32(h + 8));
	wc_file_close(&f);

	for (uint32_t version = 1; version <= 3; version++)
	{
		int			rc;

		memset(h, 0, sizeof(h));
		memcpy(h, v1_head, sizeof(v1_head));
		wc_put_fixed32(h + 8, version);
		wc_put_fixed32(h + 28, wc_crc32c(h, 28));
		{
			char		path[4200];
			FILE	   *out;

			snprintf(path, sizeof(path), "%s/000009.log", dir);
			out = fopen(path, "wb");
			CHECK(out && fwrite(h, 1, sizeof(h), out) == sizeof(h), "writing a version %u header", version);
			if (out)
				fclose(out);
		}
		wc_err_clear(&err);
		CHECK_OK(wc_file_open(dir, "000009.log", WC_OPEN_READ, &f, &err), &err);
		rc = wc_log_check_header(&f, &number, &err);
		if (version <= 2)
			CHECK(rc == WC_OK && number == 9, "version %u header: rc=%d %s", version, rc, err.msg);
		else
			CHECK(rc == WC_CORRUPT && strstr(err.msg, "format version 3") != NULL,
				  "version 3 header: rc=%d %s", rc, err.msg);
		wc_file_close(&f);
	}
	test_rmdir(dir);
}

static bool
bytes_are(const uint8_t *p, size_t len, const char *want, uint32_t want_len)
{
	return len == want_len && (len == 0 || memcmp(p, want, len) == 0);
}

/* Encodes a golden batch record with today's batch writer (a malloc'd payload). */
static uint8_t *
encode_golden_batch(const golden_record *r, size_t *len)
{
	wc_batch   *b = wc_batch_new();
	uint8_t		header[WC_BATCH_HEADER_MAX];
	uint8_t		vbuf[1024];
	const uint8_t *entries;
	size_t		elen,
				hlen;
	uint8_t    *out;
	wc_err		err;

	wc_err_clear(&err);
	for (uint32_t i = 0; i < r->count; i++)
	{
		const golden_cell *g = &r->entries[i];

		if (g->type == WC_TYPE_PUT)
			wc_batch_put(b, g->fam, g->fam_len, g->row, g->row_len, g->qual, g->qual_len,
						 g->ts, golden_value(g, vbuf), g->val_len, &err);
		else if (g->type == WC_TYPE_DEL_VERSION)
			wc_batch_delete_version(b, g->fam, g->fam_len, g->row, g->row_len, g->qual,
									g->qual_len, g->ts, &err);
		else if (g->type == WC_TYPE_DEL_COLUMN && g->val_len == WC_COLUMN_BOUND_LEN)
			wc_batch_delete_column_upto(b, g->fam, g->fam_len, g->row, g->row_len, g->qual,
										g->qual_len, wc_get_fixed64((const uint8_t *) g->val),
										&err);
		else if (g->type == WC_TYPE_DEL_COLUMN)
			wc_batch_delete_column(b, g->fam, g->fam_len, g->row, g->row_len, g->qual,
								   g->qual_len, &err);
		else if (g->type == WC_TYPE_DEL_FAMILY && g->val_len == WC_FAMILY_BOUND_LEN)
			wc_batch_delete_family_upto(b, g->fam, g->fam_len, g->row, g->row_len,
										wc_get_fixed64((const uint8_t *) g->val), &err);
		else if (g->type == WC_TYPE_DEL_FAMILY)
			wc_batch_delete_family(b, g->fam, g->fam_len, g->row, g->row_len, &err);
		else
			wc_batch_truncate(b, &err);
	}
	CHECK_OK(err.code, &err);
	entries = wc_batch_entries(b, &elen);
	hlen = wc_batch_encode_header(header, r->seq_base, r->tag, r->count);
	out = malloc(hlen + elen);
	memcpy(out, header, hlen);
	memcpy(out + hlen, entries, elen);
	*len = hlen + elen;
	wc_batch_free(b);
	return out;
}

/* One record's payload against golden.h: header fields, every entry or file. */
static void
check_golden_record(const golden_log *g, size_t i, const uint8_t *payload, size_t len)
{
	const golden_record *r = &g->records[i];
	wc_err		err;
	uint8_t		vbuf[1024];

	wc_err_clear(&err);
	if (r->kind == GOLDEN_INGEST)
	{
		wc_ingest_record ir;

		CHECK(wc_ingest_is_record(payload, len), "%s record %zu is not an ingest record", g->name, i);
		CHECK_OK(wc_ingest_decode(payload, len, &ir, &err), &err);
		CHECK(ir.seq_base == r->seq_base && ir.tag == r->tag && ir.count == r->count &&
			  ir.nfiles == r->nfiles, "%s record %zu: seq_base %llu tag %llu count %u files %d",
			  g->name, i, (unsigned long long) ir.seq_base, (unsigned long long) ir.tag,
			  ir.count, ir.nfiles);
		for (int k = 0; k < ir.nfiles && k < r->nfiles; k++)
			CHECK(ir.files[k].number == r->files[k].number &&
				  strcmp(ir.files[k].family, r->files[k].family) == 0,
				  "%s record %zu file %d: %llu %s", g->name, i, k,
				  (unsigned long long) ir.files[k].number, ir.files[k].family);
		wc_ingest_record_clear(&ir);
	}
	else
	{
		wc_batch_reader br;
		wc_batch_entry e;
		uint32_t	n = 0;
		int			bad = 0,
					rc;
		uint8_t    *again;
		size_t		again_len;

		CHECK(!wc_ingest_is_record(payload, len), "%s record %zu is an ingest record", g->name, i);
		CHECK_OK(wc_batch_reader_init(&br, payload, len, &err), &err);
		CHECK(br.seq_base == r->seq_base && br.tag == r->tag && br.count == r->count,
			  "%s record %zu: seq_base %llu tag %llu count %u", g->name, i,
			  (unsigned long long) br.seq_base, (unsigned long long) br.tag, br.count);
		while ((rc = wc_batch_reader_next(&br, &e, &err)) == 1 && n < r->count)
		{
			const golden_cell *x = &r->entries[n];

			if (e.type != x->type || e.cell.type != x->type ||
				!bytes_are(e.fam, e.fam_len, x->fam, x->fam_len) ||
				!bytes_are(e.cell.row, e.cell.row_len, x->row, x->row_len) ||
				!bytes_are(e.cell.qual, e.cell.qual_len, x->qual, x->qual_len) ||
				e.cell.ts != x->ts || e.cell.seq != r->seq_base + n ||
				!bytes_are(e.cell.val, e.cell.val_len, (const char *) golden_value(x, vbuf),
						   x->val_len))
			{
				if (bad++ < 5)
					fprintf(stderr, "%s record %zu entry %u differs from golden.h\n", g->name, i, n);
			}
			n++;
		}
		CHECK(rc == 0 && n == r->count && bad == 0, "%s record %zu: %u entries, %d differ: %s",
			  g->name, i, n, bad, err.msg);
		/* the payload format is the writer's too: today's writes the same bytes */
		again = encode_golden_batch(r, &again_len);
		CHECK(again_len == len && memcmp(again, payload, len) == 0,
			  "%s record %zu: today's batch writer encodes %zu other bytes", g->name, i, again_len);
		free(again);
	}
}

/*
 * The golden logs: their bytes (size, checksum, header version), then read with
 * today's reader: the header, every record and where it ends, the end of the log.
 */
static void
test_golden(void)
{
	for (size_t l = 0; l < GOLDEN_NELEM(golden_logs); l++)
	{
		const golden_log *g = &golden_logs[l];
		wc_file		f;
		wc_err		err;
		uint8_t		head[WC_LOG_HEADER_SIZE];
		uint8_t    *all;
		uint64_t	number = 0,
					end = 0,
					size = 0;
		wc_log_reader *r;
		const uint8_t *payload;
		size_t		len;
		int			rc = 0;

		wc_err_clear(&err);
		CHECK_OK(wc_file_open(WC_GOLDEN_DIR, g->name, WC_OPEN_READ, &f, &err), &err);
		if (err.code != WC_OK)
			continue;
		CHECK_OK(wc_file_size(&f, &size, &err), &err);
		all = malloc(size ? size : 1);
		CHECK_OK(wc_file_pread(&f, all, size, 0, &err), &err);
		CHECK(size == g->size && wc_crc32c(all, size) == g->crc,
			  "%s: %llu bytes, CRC-32C 0x%08X; expected %llu, 0x%08X: the golden file changed",
			  g->name, (unsigned long long) size, wc_crc32c(all, size),
			  (unsigned long long) g->size, g->crc);
		free(all);
		CHECK_OK(wc_file_pread(&f, head, sizeof(head), 0, &err), &err);
		CHECK(wc_get_fixed32(head + 8) == g->version, "%s: header version %u", g->name,
			  wc_get_fixed32(head + 8));
		CHECK_OK(wc_log_check_header(&f, &number, &err), &err);
		CHECK(number == g->number, "%s: log number %llu", g->name, (unsigned long long) number);

		r = t_reader_new(&f, WC_LOG_HEADER_SIZE);
		for (size_t i = 0; i < g->nrecords; i++)
		{
			rc = wc_log_read(r, &payload, &len, &end, &err);
			CHECK(rc == 1 && end == g->ends[i], "%s record %zu: rc=%d, ends at %llu (%s)",
				  g->name, i, rc, (unsigned long long) end, err.msg);
			if (rc != 1)
				break;
			check_golden_record(g, i, payload, len);
		}
		if (rc == 1)
			CHECK(wc_log_read(r, &payload, &len, &end, &err) == 0 &&
				  wc_log_reader_offset(r) == g->size, "%s: more after the last record", g->name);
		t_reader_free(r);
		wc_file_close(&f);
	}
}

int
main(void)
{
	t_name = "test_log";
	test_golden();
	test_versions();
	test_roundtrip();
	test_recovery();
	test_corruption();
	test_concurrent();
	test_errors();
	test_large_records();
	/* again with mapped readers */
	t_map = true;
	test_roundtrip();
	test_recovery();
	test_concurrent();
	test_large_records();
	/* and with the bytes there at their making read in the mapping */
	t_whole = true;
	test_roundtrip();
	test_recovery();
	test_corruption();
	test_concurrent();
	test_large_records();
	TEST_DONE();
}
