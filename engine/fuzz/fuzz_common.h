/*
 * fuzz_common.h -- helpers shared by the libFuzzer harnesses of engine/fuzz/.
 *
 * Harnesses that need a file (the readers take a directory and a name) write the
 * input into one private temporary directory per process: under /dev/shm when it
 * exists (no disk I/O), else /tmp.  It is made once with mkdtemp, reused for every
 * input and removed at exit.
 */
#ifndef WC_FUZZ_COMMON_H
#define WC_FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wc.h"

/* A violated expectation that is not a sanitizer report: print and abort, so
 * libFuzzer saves the input as a crash. */
#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: fuzz assertion failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static char fuzz_dir[256];
static const char *fuzz_names[8];
static int	fuzz_nnames;

static void
fuzz_cleanup(void)
{
	char		path[512];

	for (int i = 0; i < fuzz_nnames; i++)
	{
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir, fuzz_names[i]);
		(void) unlink(path);
	}
	if (fuzz_dir[0])
		(void) rmdir(fuzz_dir);
}

/* The per-process directory; name is a file the harness will use there (removed
 * at exit).  Exits on failure: without it the harness cannot do anything. */
static const char *
fuzz_tmpdir(const char *name)
{
	for (int i = 0; i < fuzz_nnames; i++)
		if (strcmp(fuzz_names[i], name) == 0)
			return fuzz_dir;
	if (fuzz_nnames < 8)
		fuzz_names[fuzz_nnames++] = name;
	if (fuzz_dir[0] == '\0')
	{
		struct stat st;
		const char *base = (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
							access("/dev/shm", W_OK) == 0) ? "/dev/shm" : "/tmp";

		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/wc-fuzz-XXXXXX", base);
		if (mkdtemp(fuzz_dir) == NULL)
		{
			fprintf(stderr, "mkdtemp %s: %s\n", fuzz_dir, strerror(errno));
			exit(2);
		}
		atexit(fuzz_cleanup);
	}
	return fuzz_dir;
}

/* Writes data[0..len-1] as dir/name (created or truncated) with plain POSIX calls. */
static void
fuzz_write_file(const char *dir, const char *name, const uint8_t *data, size_t len)
{
	char		path[512];
	int			fd;
	size_t		done = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
	{
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (done < len)
	{
		ssize_t		n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			fprintf(stderr, "write %s: %s\n", path, strerror(errno));
			exit(2);
		}
		done += (size_t) n;
	}
	if (close(fd) != 0)
	{
		fprintf(stderr, "close %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

/* An error status is fine, but it must come with a message. */
static inline void
fuzz_check_err(int rc, const wc_err *err, const char *what)
{
	FUZZ_ASSERT(rc >= 0 || (err->code == rc && err->msg[0] != '\0'),
				"%s returned %d (%s) with err.code %d and message \"%s\"",
				what, rc, wc_code_name(rc), err->code, err->msg);
}

#endif
