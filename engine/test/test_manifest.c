/*
 * test_manifest.c -- manifest round trips, rejection of every damaged image,
 * atomic replacement under injected write, fsync and rename failures, and the
 * golden MANIFEST (test/golden) read with today's reader.
 */
#include <limits.h>
#include <stdint.h>

#include "coding.h"
#include "crc32c.h"
#include "env.h"
#include "golden.h"
#include "manifest.h"
#include "testutil.h"

static uint8_t *
rand_bytes(uint64_t *rs, size_t len)
{
	uint8_t    *p;

	if (len == 0)
		return NULL;
	p = malloc(len);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t) test_rand(rs);
	return p;
}

/*
 * A manifest with nfiles files whose every field is filled with varied values;
 * file 2 (if any) has a rowkey of the maximum length unless small is set.
 */
static void
make_manifest_ex(wc_manifest *m, int nlogs, int nfiles, uint64_t seed, bool small)
{
	uint64_t	rs = seed * 7 + 3;
	wc_err		err;

	memset(m, 0, sizeof(*m));
	m->version = test_rand(&rs);
	m->next_file = test_rand(&rs) >> 20;
	m->last_seq = test_rand(&rs);
	m->truncate_seq = UINT64_MAX - seed;
	for (int i = 0; i < nlogs; i++)
	{
		m->logs = realloc(m->logs, sizeof(uint64_t) * (size_t) (i + 1));
		m->logs[i] = i == 0 ? 1 : test_rand(&rs);
		m->nlogs++;
	}
	for (int i = 0; i < nfiles; i++)
	{
		wc_sst_props p;
		size_t		flen = i == 1 ? WC_MAX_FAMILY : 1 + (size_t) (test_rand(&rs) % 20);

		memset(&p, 0, sizeof(p));
		for (size_t k = 0; k < flen; k++)
			p.family[k] = (char) ('a' + test_rand(&rs) % 26);
		p.family[flen] = '\0';
		p.level = (int) (test_rand(&rs) % 2);
		/* varints of every length */
		p.cells = test_rand(&rs) >> (test_rand(&rs) % 64);
		p.tombstones = (uint64_t) i;
		p.range_tombstones = UINT64_MAX;
		p.distinct_rows = test_rand(&rs) % 1000;
		p.raw_bytes = test_rand(&rs) >> 3;
		p.file_bytes = 127;
		p.blocks = 128;
		p.ts_min = i % 3 == 0 ? INT64_MAX : -(int64_t) (test_rand(&rs) >> 2);
		p.ts_max = i % 3 == 0 ? INT64_MIN : (int64_t) (test_rand(&rs) >> 2);
		p.seq_min = test_rand(&rs);
		p.seq_max = p.seq_min + 1;
		if (i % 5 != 4)
		{
			p.row_min_len = i == 2 && !small ? WC_MAX_ROWKEY : (uint32_t) (1 + test_rand(&rs) % 40);
			p.row_min = rand_bytes(&rs, p.row_min_len);
			p.row_max_len = (uint32_t) (1 + test_rand(&rs) % 40);
			p.row_max = rand_bytes(&rs, p.row_max_len);
		}
		wc_err_clear(&err);
		if (wc_manifest_add_file(m, 1000 + (uint64_t) i * 3, &p, &err) != WC_OK)
		{
			fprintf(stderr, "add_file: %s\n", err.msg);
			exit(2);
		}
		wc_sst_props_clear(&p);
	}
	/* format version 2: records a snapshot may not see, with every other count, and
	 * the highest forgotten tag */
	if (nfiles > 1)
		m->recent.forgotten = test_rand(&rs);
	for (int i = 0; i < (nfiles > 1 ? nfiles / 3 + 1 : 0); i++)
	{
		uint64_t	lo = 1 + (test_rand(&rs) >> (test_rand(&rs) % 64));

		wc_err_clear(&err);
		if (wc_recent_add(&m->recent, 1 + (test_rand(&rs) >> 1), lo, lo + test_rand(&rs) % 1000,
						  &err) != WC_OK)
			exit(2);
	}
}

static void
make_manifest(wc_manifest *m, int nlogs, int nfiles, uint64_t seed)
{
	make_manifest_ex(m, nlogs, nfiles, seed, false);
}

static bool
bytes_eq(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
	if (alen != blen || (a == NULL) != (b == NULL))
		return false;
	return alen == 0 || memcmp(a, b, alen) == 0;
}

static bool
props_eq(const wc_sst_props *a, const wc_sst_props *b)
{
	return strcmp(a->family, b->family) == 0 && a->level == b->level &&
		a->cells == b->cells && a->tombstones == b->tombstones &&
		a->range_tombstones == b->range_tombstones &&
		a->distinct_rows == b->distinct_rows && a->raw_bytes == b->raw_bytes &&
		a->file_bytes == b->file_bytes && a->blocks == b->blocks &&
		a->ts_min == b->ts_min && a->ts_max == b->ts_max &&
		a->seq_min == b->seq_min && a->seq_max == b->seq_max &&
		bytes_eq(a->row_min, a->row_min_len, b->row_min, b->row_min_len) &&
		bytes_eq(a->row_max, a->row_max_len, b->row_max, b->row_max_len);
}

static bool
manifest_eq(const wc_manifest *a, const wc_manifest *b)
{
	if (a->version != b->version || a->next_file != b->next_file ||
		a->last_seq != b->last_seq || a->truncate_seq != b->truncate_seq ||
		a->nlogs != b->nlogs || a->nfiles != b->nfiles || a->recent.n != b->recent.n ||
		a->recent.forgotten != b->recent.forgotten)
		return false;
	for (int i = 0; i < a->recent.n; i++)
		if (memcmp(&a->recent.items[i], &b->recent.items[i], sizeof(wc_recent)) != 0)
			return false;
	for (int i = 0; i < a->nlogs; i++)
		if (a->logs[i] != b->logs[i])
			return false;
	for (int i = 0; i < a->nfiles; i++)
		if (a->files[i].number != b->files[i].number ||
			!props_eq(&a->files[i].props, &b->files[i].props))
			return false;
	return true;
}

/*
 * Recent records are kept in tag order (scans binary-search them): whatever
 * the order they are added in, joined in, or read from a MANIFEST that an
 * older version wrote in commit order.
 */
static void
test_recent_order(void)
{
	const uint64_t tags[] = {50, 30, 90, 30, 70, 10, 95, 60};
	wc_recent_list l,
				other;
	wc_manifest m,
				back;
	uint8_t    *buf;
	size_t		len;
	wc_err		err;

	memset(&l, 0, sizeof(l));
	memset(&other, 0, sizeof(other));
	wc_err_clear(&err);
	for (int i = 0; i < 8; i++)
		CHECK_OK(wc_recent_add(&l, tags[i], 100 + (uint64_t) i, 100 + (uint64_t) i, &err), &err);
	for (int i = 1; i < l.n; i++)
		CHECK(l.items[i - 1].tag <= l.items[i].tag, "added: tag %llu before %llu",
			  (unsigned long long) l.items[i - 1].tag, (unsigned long long) l.items[i].tag);
	CHECK(l.items[0].tag == 10 && l.items[0].seq_lo == 105, "the record moves with its tag");
	CHECK(wc_recent_lower_bound(&l, 0, 30) == 1 && wc_recent_lower_bound(&l, 0, 31) == 3 &&
		  wc_recent_lower_bound(&l, 0, 1) == 0 && wc_recent_lower_bound(&l, 0, 96) == 8 &&
		  wc_recent_lower_bound(&l, 4, 30) == 4, "lower bounds");

	/* a record taken back (its apply failed) is that one, wherever it went */
	CHECK_OK(wc_recent_add(&l, 20, 200, 200, &err), &err);
	wc_recent_remove(&l, 30, 103);
	wc_recent_remove(&l, 20, 200);
	CHECK(l.n == 7 && l.items[1].tag == 30 && l.items[1].seq_lo == 101 && l.items[2].tag == 50,
		  "taken back: %d records, then tag %llu seq %llu", l.n,
		  (unsigned long long) l.items[1].tag, (unsigned long long) l.items[1].seq_lo);
	CHECK_OK(wc_recent_add(&l, 30, 103, 103, &err), &err);

	/* joined: a flush moves a log's list after MANIFEST's */
	CHECK_OK(wc_recent_add(&other, 40, 1, 1, &err), &err);
	CHECK_OK(wc_recent_add(&other, 99, 2, 2, &err), &err);
	CHECK_OK(wc_recent_append(&l, &other, &err), &err);
	CHECK(l.n == 10, "%d records joined", l.n);
	for (int i = 1; i < l.n; i++)
		CHECK(l.items[i - 1].tag <= l.items[i].tag, "joined: tag %llu before %llu",
			  (unsigned long long) l.items[i - 1].tag, (unsigned long long) l.items[i].tag);

	/* a MANIFEST with its list out of order (as older versions wrote it) */
	memset(&m, 0, sizeof(m));
	m.version = 1;
	m.next_file = 2;
	CHECK_OK(wc_recent_append(&m.recent, &l, &err), &err);
	{
		wc_recent	t = m.recent.items[0];

		m.recent.items[0] = m.recent.items[m.recent.n - 1];
		m.recent.items[m.recent.n - 1] = t;
	}
	CHECK_OK(wc_manifest_encode(&m, &buf, &len, &err), &err);
	CHECK_OK(wc_manifest_decode(buf, len, &back, &err), &err);
	CHECK(back.recent.n == 10, "%d records read", back.recent.n);
	for (int i = 1; i < back.recent.n; i++)
		CHECK(back.recent.items[i - 1].tag <= back.recent.items[i].tag,
			  "read: tag %llu before %llu", (unsigned long long) back.recent.items[i - 1].tag,
			  (unsigned long long) back.recent.items[i].tag);
	free(buf);
	wc_manifest_clear(&m);
	wc_manifest_clear(&back);
	wc_recent_clear(&l);
	wc_recent_clear(&other);
}

static void
test_roundtrip(void)
{
	const int	counts[] = {0, 1, 500};
	char	   *dir = test_tmpdir("manifest");
	wc_err		err;
	wc_manifest m;

	wc_err_clear(&err);
	CHECK(wc_manifest_read(dir, &m, &err) == WC_NOT_FOUND, "no MANIFEST: %s", err.msg);
	CHECK(m.nfiles == 0 && m.files == NULL && m.logs == NULL, "empty after failure");

	for (int c = 0; c < 3; c++)
	{
		wc_manifest a,
					b,
					copy;
		uint8_t    *buf;
		size_t		len;

		make_manifest(&a, c == 0 ? 0 : c + 1, counts[c], (uint64_t) c);
		wc_err_clear(&err);
		CHECK_OK(wc_manifest_encode(&a, &buf, &len, &err), &err);
		CHECK_OK(wc_manifest_decode(buf, len, &b, &err), &err);
		CHECK(manifest_eq(&a, &b), "%d files: decode(encode(m)) == m", counts[c]);
		/* without recent records, the format version earlier builds read */
		CHECK(wc_get_fixed32(buf + 8) == (a.recent.n > 0 ? 2u : 1u),
			  "%d recent records: format version %u", a.recent.n, wc_get_fixed32(buf + 8));
		wc_manifest_clear(&b);
		if (a.recent.n == 0)
		{
			/* the same body read as version 2 lacks its count of recent records */
			wc_put_fixed32(buf + 8, 2);
			wc_put_fixed32(buf + len - 4, wc_crc32c(buf, len - 4));
			CHECK(wc_manifest_decode(buf, len, &b, &err) == WC_CORRUPT &&
				  strstr(err.msg, "nrecent") != NULL, "version 2 without nrecent: %s", err.msg);
			wc_err_clear(&err);
		}
		free(buf);

		CHECK_OK(wc_manifest_write(dir, &a, &err), &err);
		CHECK(!wc_env_exists(dir, "MANIFEST.tmp"), "no MANIFEST.tmp left");
		CHECK_OK(wc_manifest_read(dir, &b, &err), &err);
		CHECK(manifest_eq(&a, &b), "%d files: read(write(m)) == m", counts[c]);

		CHECK_OK(wc_manifest_copy(&copy, &b, &err), &err);
		CHECK(manifest_eq(&a, &copy), "%d files: copy == m", counts[c]);
		wc_manifest_clear(&b);
		CHECK(manifest_eq(&a, &copy), "copy independent of its source");
		if (counts[c] > 0)
		{
			uint64_t	gone = copy.files[counts[c] / 2].number;
			int			n = copy.nfiles;
			bool		found = false;

			wc_manifest_remove_file(&copy, gone);
			wc_manifest_remove_file(&copy, 424242);
			CHECK(copy.nfiles == n - 1, "remove_file");
			for (int i = 0; i < copy.nfiles; i++)
				found |= copy.files[i].number == gone;
			CHECK(!found, "removed file is gone");
			CHECK(copy.nfiles == 0 || copy.files[copy.nfiles - 1].number == a.files[n - 1].number,
				  "order kept");
		}
		wc_manifest_clear(&copy);
		CHECK(copy.nfiles == 0 && copy.files == NULL, "clear empties");
		wc_manifest_clear(&copy);	/* twice is harmless */
		wc_manifest_clear(&a);
	}
	test_rmdir(dir);
}

/* Every flipped byte and every truncation of an image is rejected. */
static void
test_damage(void)
{
	wc_manifest a,
				b;
	wc_err		err;
	uint8_t    *buf;
	size_t		len;
	int			bad = 0;
	const uint8_t masks[] = {0x01, 0x40, 0xff};

	/* small rows keep this quick: a flip in a long row is no different */
	make_manifest_ex(&a, 3, 6, 9, true);
	wc_err_clear(&err);
	CHECK_OK(wc_manifest_encode(&a, &buf, &len, &err), &err);
	for (int mi = 0; mi < 3; mi++)
		for (size_t i = 0; i < len; i++)
		{
			int			rc;

			buf[i] ^= masks[mi];
			wc_err_clear(&err);
			rc = wc_manifest_decode(buf, len, &b, &err);
			buf[i] ^= masks[mi];
			if (rc != WC_CORRUPT || b.nfiles != 0 || b.files != NULL || b.logs != NULL ||
				strstr(err.msg, "MANIFEST") == NULL)
			{
				bad++;
				fprintf(stderr, "flip 0x%02x at %zu: rc=%d %s\n", masks[mi], i, rc, err.msg);
			}
			if (rc == WC_OK)
				wc_manifest_clear(&b);
		}
	CHECK(bad == 0, "%d of %zu flips decoded", bad, 3 * len);

	bad = 0;
	for (size_t cut = 0; cut < len; cut++)
	{
		int			rc;

		wc_err_clear(&err);
		rc = wc_manifest_decode(buf, cut, &b, &err);
		if (rc != WC_CORRUPT)
		{
			bad++;
			if (rc == WC_OK)
				wc_manifest_clear(&b);
		}
	}
	CHECK(bad == 0, "%d of %zu truncations decoded", bad, len);

	/* trailing bytes */
	{
		uint8_t    *longer = malloc(len + 1);

		memcpy(longer, buf, len);
		longer[len] = 0;
		wc_err_clear(&err);
		CHECK(wc_manifest_decode(longer, len + 1, &b, &err) == WC_CORRUPT &&
			  strstr(err.msg, "trailing") != NULL, "trailing byte: %s", err.msg);
		free(longer);
	}
	free(buf);
	wc_manifest_clear(&a);
}

/*
 * Images with a correct checksum but a malformed body (what a bug, not a disk,
 * would produce): each must be rejected with a message, without a huge allocation.
 */
static size_t
seal(uint8_t *img, size_t body_len)
{
	wc_put_fixed32(img + 12, (uint32_t) body_len);
	wc_put_fixed32(img + 16 + body_len, wc_crc32c(img, 16 + body_len));
	return 16 + body_len + 4;
}

static void
test_malformed(void)
{
	wc_manifest a,
				b;
	wc_err		err;
	uint8_t    *good;
	size_t		good_len;
	uint8_t		img[4096];
	uint8_t    *p;
	size_t		len;
	int			rc;

	/* the header of a real image, then handmade bodies */
	make_manifest(&a, 0, 0, 1);
	wc_err_clear(&err);
	CHECK_OK(wc_manifest_encode(&a, &good, &good_len, &err), &err);
	CHECK(good_len == 16 + 34 + 4, "empty manifest is %zu bytes", good_len);
	memcpy(img, good, good_len);
	free(good);
	wc_manifest_clear(&a);

	/* nlogs far beyond the body */
	p = img + 16 + 32;
	p = wc_put_varint64(p, UINT64_C(1) << 60);
	len = seal(img, (size_t) (p - img) - 16);
	wc_err_clear(&err);
	rc = wc_manifest_decode(img, len, &b, &err);
	CHECK(rc == WC_CORRUPT && strstr(err.msg, "nlogs") != NULL, "huge nlogs: %s", err.msg);

	/* nfiles beyond the body */
	p = img + 16 + 32;
	*p++ = 0;
	p = wc_put_varint64(p, 1000000);
	len = seal(img, (size_t) (p - img) - 16);
	wc_err_clear(&err);
	rc = wc_manifest_decode(img, len, &b, &err);
	CHECK(rc == WC_CORRUPT && strstr(err.msg, "nfiles") != NULL, "huge nfiles: %s", err.msg);

	/* a varint that never ends */
	p = img + 16 + 32;
	for (int i = 0; i < 11; i++)
		*p++ = 0xff;
	len = seal(img, (size_t) (p - img) - 16);
	wc_err_clear(&err);
	CHECK(wc_manifest_decode(img, len, &b, &err) == WC_CORRUPT, "endless varint: %s", err.msg);

	/* one file whose family is too long, then one whose rows are too long */
	for (int which = 0; which < 3; which++)
	{
		p = img + 16 + 32;
		*p++ = 0;				/* nlogs */
		*p++ = 1;				/* nfiles */
		wc_put_fixed64(p, 5);
		p += 8;
		*p++ = 0;				/* level */
		if (which == 0)
		{
			p = wc_put_varint64(p, WC_MAX_FAMILY + 1);
			memset(p, 'f', WC_MAX_FAMILY + 1);
			p += WC_MAX_FAMILY + 1;
		}
		else
		{
			*p++ = 1;
			*p++ = which == 2 ? 0 : 'f';	/* a zero byte in a family name */
		}
		for (int i = 0; i < 7; i++)
			*p++ = 1;
		memset(p, 0, 32);
		p += 32;
		p = wc_put_varint64(p, which == 1 ? WC_MAX_ROWKEY + 1 : 0);
		if (which == 1)
		{
			/* claims more than a row may have; nothing follows */
		}
		else
			*p++ = 0;
		len = seal(img, (size_t) (p - img) - 16);
		wc_err_clear(&err);
		rc = wc_manifest_decode(img, len, &b, &err);
		CHECK(rc == WC_CORRUPT && b.files == NULL, "bad file entry %d: %s", which, err.msg);
		if (which == 0)
			CHECK(strstr(err.msg, "family") != NULL, "%s", err.msg);
		if (which == 1)
			CHECK(strstr(err.msg, "row_min") != NULL, "%s", err.msg);
	}

	/* a valid file entry followed by a stray byte inside the body */
	p = img + 16 + 32;
	*p++ = 0;
	*p++ = 1;
	wc_put_fixed64(p, 5);
	p += 8;
	*p++ = 0;
	*p++ = 1;
	*p++ = 'f';
	for (int i = 0; i < 7; i++)
		*p++ = 1;
	memset(p, 0, 32);
	p += 32;
	*p++ = 0;
	*p++ = 0;
	len = seal(img, (size_t) (p - img) - 16);
	wc_err_clear(&err);
	CHECK_OK(wc_manifest_decode(img, len, &b, &err), &err);
	CHECK(b.nfiles == 1 && b.files[0].number == 5 && strcmp(b.files[0].props.family, "f") == 0 &&
		  b.files[0].props.row_min == NULL, "handmade entry decoded");
	wc_manifest_clear(&b);
	*p++ = 7;
	len = seal(img, (size_t) (p - img) - 16);
	wc_err_clear(&err);
	CHECK(wc_manifest_decode(img, len, &b, &err) == WC_CORRUPT, "stray byte in body: %s", err.msg);

	/* wrong format version with a correct checksum */
	wc_put_fixed32(img + 8, 3);
	len = seal(img, 34);
	wc_err_clear(&err);
	CHECK(wc_manifest_decode(img, len, &b, &err) == WC_CORRUPT && strstr(err.msg, "version") != NULL,
		  "version 3: %s", err.msg);
}

/* Writes m, failing the nth call of kind; returns the write's status. */
static int
write_with_fault(const char *dir, const wc_manifest *m, wc_fault_kind kind, long nth, wc_err *err)
{
	int			rc;

	wc_fault_set(kind, nth, EIO);
	rc = wc_manifest_write(dir, m, err);
	wc_fault_set(kind, 0, 0);
	return rc;
}

static void
test_faults(void)
{
	char	   *dir = test_tmpdir("manifault");
	const wc_fault_kind kinds[] = {WC_FAULT_WRITE, WC_FAULT_SYNC, WC_FAULT_RENAME};
	const char *names[] = {"write", "sync", "rename"};
	wc_manifest old,
				new,
				got;
	wc_err		err;
	long		per_write[3];

	make_manifest(&old, 2, 4, 11);
	make_manifest(&new, 3, 7, 12);
	wc_err_clear(&err);
	CHECK_OK(wc_manifest_write(dir, &old, &err), &err);

	/* how many calls of each kind one write makes */
	for (int k = 0; k < 3; k++)
		per_write[k] = wc_fault_count(kinds[k]);
	CHECK_OK(wc_manifest_write(dir, &old, &err), &err);
	for (int k = 0; k < 3; k++)
		per_write[k] = wc_fault_count(kinds[k]) - per_write[k];
	CHECK(per_write[0] >= 1 && per_write[1] >= 2 && per_write[2] >= 1,
		  "calls per write: %ld writes, %ld syncs, %ld renames", per_write[0], per_write[1], per_write[2]);

	for (int k = 0; k < 3; k++)
	{
		for (long nth = 1; nth <= per_write[k] + 1; nth++)
		{
			int			rc;
			bool		is_old,
						is_new;

			wc_err_clear(&err);
			rc = write_with_fault(dir, &new, kinds[k], nth, &err);
			if (nth > per_write[k])
			{
				CHECK_OK(rc, &err);
			}
			else
				CHECK(rc == WC_IO && err.msg[0] != '\0', "%s fault %ld: rc=%d", names[k], nth, rc);
			CHECK(!wc_env_exists(dir, "MANIFEST.tmp"), "%s fault %ld: no MANIFEST.tmp", names[k], nth);

			wc_err_clear(&err);
			CHECK_OK(wc_manifest_read(dir, &got, &err), &err);
			is_old = manifest_eq(&got, &old);
			is_new = manifest_eq(&got, &new);
			wc_manifest_clear(&got);
			if (rc == WC_OK)
				CHECK(is_new, "%s: a successful write is read back", names[k]);
			else if (kinds[k] == WC_FAULT_SYNC && nth == per_write[k])
				/* only the directory fsync after the rename failed */
				CHECK(is_old || is_new, "%s fault %ld: old or new manifest", names[k], nth);
			else
				CHECK(is_old, "%s fault %ld: previous manifest intact", names[k], nth);

			/* back to the old one for the next round */
			wc_err_clear(&err);
			CHECK_OK(wc_manifest_write(dir, &old, &err), &err);
		}
	}
	wc_manifest_clear(&old);
	wc_manifest_clear(&new);
	test_rmdir(dir);
}

/* A MANIFEST file that is damaged on disk or absurdly large is reported, not read. */
static void
test_file_damage(void)
{
	char	   *dir = test_tmpdir("manibad");
	wc_manifest m,
				got;
	wc_err		err;
	wc_file		f;
	uint8_t		zero = 0;

	make_manifest(&m, 1, 2, 5);
	wc_err_clear(&err);
	CHECK_OK(wc_manifest_write(dir, &m, &err), &err);
	CHECK_OK(wc_file_open(dir, "MANIFEST", WC_OPEN_RDWR, &f, &err), &err);
	CHECK_OK(wc_file_pwrite(&f, &zero, 1, 40, &err), &err);
	CHECK(wc_manifest_read(dir, &got, &err) == WC_CORRUPT && strstr(err.msg, "checksum") != NULL,
		  "damaged file: %s", err.msg);
	wc_err_clear(&err);
	CHECK_OK(wc_file_truncate(&f, 65u << 20, &err), &err);
	CHECK(wc_manifest_read(dir, &got, &err) == WC_CORRUPT, "huge file: %s", err.msg);
	wc_err_clear(&err);
	CHECK_OK(wc_file_truncate(&f, 0, &err), &err);
	CHECK(wc_manifest_read(dir, &got, &err) == WC_CORRUPT, "empty file: %s", err.msg);
	wc_file_close(&f);
	wc_manifest_clear(&m);
	test_rmdir(dir);
}

static bool
bytes_are(const uint8_t *p, size_t len, const char *want, uint32_t want_len)
{
	return len == want_len && (len == 0 || (p != NULL && memcmp(p, want, len) == 0));
}

/* Reads up to cap bytes of the golden file name (under WC_GOLDEN_DIR) into raw; its length. */
static size_t
read_golden(const char *name, uint8_t *raw, size_t cap)
{
	char		path[4200];
	FILE	   *fp;
	size_t		len = 0;

	snprintf(path, sizeof(path), "%s/%s", WC_GOLDEN_DIR, name);
	if ((fp = fopen(path, "rb")) != NULL)
	{
		len = fread(raw, 1, cap, fp);
		fclose(fp);
	}
	return len;
}

/*
 * The golden manifest of format version 2 (test/golden/manifest-v2): its recent records
 * and forgotten tag are read back, the rest as in version 1, and today's encoder writes
 * the same image from what was read.
 */
static void
test_golden_v2(void)
{
	uint8_t		raw[GOLDEN_MANIFEST_V2_SIZE + 1];
	size_t		len = read_golden("manifest-v2/MANIFEST", raw, sizeof(raw));
	wc_manifest m;
	wc_err		err;
	uint8_t    *again = NULL;
	size_t		again_len = 0;
	int			rc;

	CHECK(len == GOLDEN_MANIFEST_V2_SIZE,
		  "manifest-v2/MANIFEST: %zu bytes, expected %d: the golden file changed",
		  len, GOLDEN_MANIFEST_V2_SIZE);
	CHECK(len >= 12 && wc_get_fixed32(raw + 8) == 2, "format version %u", wc_get_fixed32(raw + 8));
	wc_err_clear(&err);
	rc = wc_manifest_read(WC_GOLDEN_DIR "/manifest-v2", &m, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return;
	CHECK(m.version == GOLDEN_MANIFEST_VERSION && m.nlogs == (int) GOLDEN_NELEM(golden_manifest_logs) &&
		  m.nfiles == (int) GOLDEN_NELEM(golden_manifest_files), "version %llu, %d logs, %d files",
		  (unsigned long long) m.version, m.nlogs, m.nfiles);
	CHECK(m.recent.n == (int) GOLDEN_NELEM(golden_manifest_v2_recent), "%d recent records",
		  m.recent.n);
	for (int i = 0; i < m.recent.n && i < (int) GOLDEN_NELEM(golden_manifest_v2_recent); i++)
		CHECK(m.recent.items[i].tag == golden_manifest_v2_recent[i].tag &&
			  m.recent.items[i].seq_lo == golden_manifest_v2_recent[i].seq_lo &&
			  m.recent.items[i].seq_hi == golden_manifest_v2_recent[i].seq_hi,
			  "recent record %d: tag %llu seqs %llu..%llu", i,
			  (unsigned long long) m.recent.items[i].tag,
			  (unsigned long long) m.recent.items[i].seq_lo,
			  (unsigned long long) m.recent.items[i].seq_hi);
	CHECK(m.recent.forgotten == GOLDEN_MANIFEST_V2_FORGOTTEN, "forgotten %llu",
		  (unsigned long long) m.recent.forgotten);
	CHECK_OK(wc_manifest_encode(&m, &again, &again_len, &err), &err);
	CHECK(again != NULL && again_len == len && memcmp(again, raw, len) == 0,
		  "re-encoded: %zu bytes, not the golden image", again_len);
	free(again);
	wc_manifest_clear(&m);
}

/*
 * The golden MANIFEST: its bytes (size, checksum), every field as golden.h has it,
 * and today's encoder writes the same image from what was read.
 */
static void
test_golden(void)
{
	uint8_t		raw[GOLDEN_MANIFEST_SIZE + 1];
	size_t		len = read_golden("MANIFEST", raw, sizeof(raw));
	wc_manifest m;
	wc_err		err;
	uint8_t    *again = NULL;
	size_t		again_len = 0;
	int			rc;

	CHECK(len == GOLDEN_MANIFEST_SIZE && wc_crc32c(raw, len) == GOLDEN_MANIFEST_CRC,
		  "MANIFEST: %zu bytes, CRC-32C 0x%08X; expected %d, 0x%08X: the golden file changed",
		  len, wc_crc32c(raw, len), GOLDEN_MANIFEST_SIZE, GOLDEN_MANIFEST_CRC);
	CHECK(len >= 12 && wc_get_fixed32(raw + 8) == 1, "format version %u", wc_get_fixed32(raw + 8));

	wc_err_clear(&err);
	rc = wc_manifest_read(WC_GOLDEN_DIR, &m, &err);
	CHECK_OK(rc, &err);
	if (rc != WC_OK)
		return;
	CHECK(m.version == GOLDEN_MANIFEST_VERSION && m.next_file == GOLDEN_MANIFEST_NEXT_FILE &&
		  m.last_seq == GOLDEN_MANIFEST_LAST_SEQ && m.truncate_seq == GOLDEN_MANIFEST_TRUNCATE_SEQ,
		  "version %llu next_file %llu last_seq %llu truncate_seq %llu",
		  (unsigned long long) m.version, (unsigned long long) m.next_file,
		  (unsigned long long) m.last_seq, (unsigned long long) m.truncate_seq);
	CHECK(m.nlogs == (int) GOLDEN_NELEM(golden_manifest_logs), "%d logs", m.nlogs);
	for (int i = 0; i < m.nlogs && i < (int) GOLDEN_NELEM(golden_manifest_logs); i++)
		CHECK(m.logs[i] == golden_manifest_logs[i], "log %d is %llu", i,
			  (unsigned long long) m.logs[i]);
	CHECK(m.nfiles == (int) GOLDEN_NELEM(golden_manifest_files), "%d files", m.nfiles);
	for (int i = 0; i < m.nfiles && i < (int) GOLDEN_NELEM(golden_manifest_files); i++)
	{
		const wc_sst_props *p = &m.files[i].props;
		const golden_props *e = &golden_manifest_files[i].props;

		CHECK(m.files[i].number == golden_manifest_files[i].number, "file %d is %llu", i,
			  (unsigned long long) m.files[i].number);
		CHECK(strcmp(p->family, e->family) == 0 && p->level == e->level,
			  "file %d: family \"%s\" level %d", i, p->family, p->level);
		CHECK(p->cells == e->cells && p->tombstones == e->tombstones &&
			  p->range_tombstones == e->range_tombstones && p->distinct_rows == e->distinct_rows &&
			  p->raw_bytes == e->raw_bytes && p->file_bytes == e->file_bytes &&
			  p->blocks == e->blocks, "file %d: counters", i);
		CHECK(p->ts_min == e->ts_min && p->ts_max == e->ts_max && p->seq_min == e->seq_min &&
			  p->seq_max == e->seq_max, "file %d: ts %lld..%lld seq %llu..%llu", i,
			  (long long) p->ts_min, (long long) p->ts_max,
			  (unsigned long long) p->seq_min, (unsigned long long) p->seq_max);
		CHECK(bytes_are(p->row_min, p->row_min_len, e->row_min, e->row_min_len) &&
			  bytes_are(p->row_max, p->row_max_len, e->row_max, e->row_max_len),
			  "file %d: rowkey range", i);
	}
	CHECK_OK(wc_manifest_encode(&m, &again, &again_len, &err), &err);
	CHECK(again_len == len && memcmp(again, raw, len) == 0,
		  "today's encoder writes another image (%zu bytes) of the golden MANIFEST", again_len);
	free(again);
	wc_manifest_clear(&m);
}

int
main(void)
{
	t_name = "test_manifest";
	test_golden();
	test_golden_v2();
	test_recent_order();
	test_roundtrip();
	test_damage();
	test_malformed();
	test_faults();
	test_file_damage();
	TEST_DONE();
}
