/* test_notify.c - daemon/notify.c: sd_notify without libsystemd. A Unix
 * datagram socket bound in a temporary directory (or in the abstract
 * namespace, '@' in NOTIFY_SOCKET) stands for systemd's; each message
 * arrives as one datagram with its bytes. Names it cannot reach or that are
 * malformed are refused; without NOTIFY_SOCKET nothing is sent. And the
 * watchdog interval from WATCHDOG_USEC and WATCHDOG_PID. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gerr.h"
#include "notify.h"
#include "unit_main.h"

struct nfx {
	char dir[64];
	char path[96];
	int fd; /* systemd's end */
};

static int bind_at(const char *name, int abstract)
{
	struct sockaddr_un sa;
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	assert_true(n < sizeof(sa.sun_path));
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					  n + (abstract ? 1 : 0))), 0);
	return fd;
}

static int setup(void **state)
{
	struct nfx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_notify.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/notify", f->dir);
	f->fd = bind_at(f->path, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct nfx *f = *state;

	close(f->fd);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	unsetenv("NOTIFY_SOCKET");
	return 0;
}

/* The next datagram, which must be there already (a Unix datagram is
 * queued by the sendto that returned), as a string; NULL when none. */
static char *next_datagram(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0)
		return NULL;
	assert_true((size_t)n < len - 1); /* not cut short */
	buf[n] = '\0';
	return buf;
}

static void test_path(void **state)
{
	struct nfx *f = *state;
	char buf[4096];

	assert_int_equal(setenv("NOTIFY_SOCKET", f->path, 1), 0);
	assert_int_equal(notify_send("READY=1"), 0);
	assert_int_equal(notify_send("STATUS=2 jobs running, 5 workers\n"
				     "WATCHDOG=1"), 0);
	assert_int_equal(notify_send("STOPPING=1"), 0);
	/* One datagram per message, in order, with exactly its bytes. */
	assert_string_equal(next_datagram(f->fd, buf, sizeof(buf)), "READY=1");
	assert_string_equal(next_datagram(f->fd, buf, sizeof(buf)),
			    "STATUS=2 jobs running, 5 workers\nWATCHDOG=1");
	assert_string_equal(next_datagram(f->fd, buf, sizeof(buf)), "STOPPING=1");
	assert_null(next_datagram(f->fd, buf, sizeof(buf)));
	/* The variable stays for the next call (and for children). */
	assert_string_equal(getenv("NOTIFY_SOCKET"), f->path);
}

static void test_abstract(void **state)
{
	struct nfx *f = *state;
	char name[64], env[80], buf[256];
	int fd;

	(void)f;
	snprintf(name, sizeof(name), "gpud-test-notify-%ld", (long)getpid());
	fd = bind_at(name, 1);
	snprintf(env, sizeof(env), "@%s", name);
	assert_int_equal(setenv("NOTIFY_SOCKET", env, 1), 0);
	assert_int_equal(notify_send("READY=1\nSTATUS=serving"), 0);
	assert_string_equal(next_datagram(fd, buf, sizeof(buf)),
			    "READY=1\nSTATUS=serving");
	/* The name is exact: a longer one is another socket, not bound. */
	snprintf(env, sizeof(env), "@%s-x", name);
	assert_int_equal(setenv("NOTIFY_SOCKET", env, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_IO);
	assert_null(next_datagram(fd, buf, sizeof(buf)));
	close(fd);
	snprintf(env, sizeof(env), "@%s", name);
	assert_int_equal(setenv("NOTIFY_SOCKET", env, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_IO); /* closed: gone */
}

static void test_unset(void **state)
{
	struct nfx *f = *state;
	char buf[64];

	assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
	assert_int_equal(notify_send("READY=1"), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", "", 1), 0);
	assert_int_equal(notify_send("READY=1"), 0);
	assert_null(next_datagram(f->fd, buf, sizeof(buf)));
}

static void test_refused(void **state)
{
	struct nfx *f = *state;
	char buf[256], missing[96];
	struct sockaddr_un sa;
	int stream;

	/* Relative names, and names too long for sun_path. */
	assert_int_equal(setenv("NOTIFY_SOCKET", "notify", 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_INVAL);
	assert_int_equal(setenv("NOTIFY_SOCKET", "./notify", 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_INVAL);
	memset(buf, 'a', sizeof(buf));
	buf[0] = '/';
	buf[sizeof(sa.sun_path)] = '\0'; /* no room for its NUL */
	assert_int_equal(setenv("NOTIFY_SOCKET", buf, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_INVAL);
	buf[0] = '@';
	assert_int_equal(setenv("NOTIFY_SOCKET", buf, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_INVAL);
	/* Nothing listening: a missing file, a plain file, a stream socket. */
	snprintf(missing, sizeof(missing), "%s/none", f->dir);
	assert_int_equal(setenv("NOTIFY_SOCKET", missing, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_IO);
	fclose(fopen(missing, "w"));
	assert_int_equal(notify_send("READY=1"), GERR_IO);
	unlink(missing);
	stream = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(stream >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", missing);
	assert_int_equal(bind(stream, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(stream, 1), 0);
	assert_int_equal(notify_send("READY=1"), GERR_IO);
	close(stream);
	unlink(missing);
	/* None of it reached the real one. */
	assert_null(next_datagram(f->fd, buf, sizeof(buf)));
}

static void test_watchdog(void **state)
{
	char pid[32];
	/* A sign or leading blanks too, which strtoull alone would take
	 * ("-5" as 2^64 - 5). */
	static const char *const bad[] = { "", "0", "abc", "12x", "0x10",
					   "99999999999999999999999", "-5",
					   " 5", "+5" };

	(void)state;
	assert_int_equal(unsetenv("WATCHDOG_USEC"), 0);
	assert_int_equal(unsetenv("WATCHDOG_PID"), 0);
	assert_int_equal(notify_watchdog_usec(), 0);
	assert_int_equal(setenv("WATCHDOG_USEC", "30000000", 1), 0);
	assert_int_equal(notify_watchdog_usec(), 30000000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(setenv("WATCHDOG_USEC", bad[i], 1), 0);
		if (notify_watchdog_usec() != 0)
			fail_msg("WATCHDOG_USEC='%s' taken", bad[i]);
	}
	/* WATCHDOG_PID: ours, another process's, malformed, empty. */
	assert_int_equal(setenv("WATCHDOG_USEC", "1500000", 1), 0);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	assert_int_equal(setenv("WATCHDOG_PID", pid, 1), 0);
	assert_int_equal(notify_watchdog_usec(), 1500000);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
	assert_int_equal(setenv("WATCHDOG_PID", pid, 1), 0);
	assert_int_equal(notify_watchdog_usec(), 0);
	assert_int_equal(setenv("WATCHDOG_PID", "1x", 1), 0);
	assert_int_equal(notify_watchdog_usec(), 0);
	assert_int_equal(setenv("WATCHDOG_PID", "", 1), 0);
	assert_int_equal(notify_watchdog_usec(), 1500000);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

UNIT_MAIN(cmocka_unit_test_setup_teardown(test_path, setup, teardown),
	cmocka_unit_test_setup_teardown(test_abstract, setup, teardown),
	cmocka_unit_test_setup_teardown(test_unset, setup, teardown),
	cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	cmocka_unit_test(test_watchdog))
