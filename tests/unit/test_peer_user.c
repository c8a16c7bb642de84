/* test_peer_user.c - unit tests of daemon/peer_user.c: the Unix user at
 * the other end of a Unix socket, by name, or "uid N". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "peer_user.h"
#include "unit_main.h"

/* A socket pair's peer is this process: its user's name. */
static void test_peer(void **state)
{
	char name[PEER_USER_MAX], want[PEER_USER_MAX];
	struct passwd *pw = getpwuid(getuid());
	int sv[2];

	(void)state;
	if (pw && strlen(pw->pw_name) < sizeof(want))
		snprintf(want, sizeof(want), "%s", pw->pw_name);
	else
		snprintf(want, sizeof(want), "uid %lu", (unsigned long)getuid());
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(peer_user_of_fd(sv[0], name, sizeof(name)), 0);
	assert_string_equal(name, want);
	close(sv[0]);
	close(sv[1]);
	/* Not a socket: the kernel's error, and no name. */
	assert_int_equal(peer_user_of_fd(-1, name, sizeof(name)), -EBADF);
	assert_string_equal(name, "");
}

/* A user without a name is its number. */
static void test_no_name(void **state)
{
	char name[PEER_USER_MAX];
	uid_t nobody = (uid_t)3999999999u;

	(void)state;
	if (getpwuid(nobody))
		skip();
	peer_user_name(nobody, name, sizeof(name));
	assert_string_equal(name, "uid 3999999999");
	peer_user_name(0, name, sizeof(name));
	assert_string_equal(name, getpwuid(0) ? getpwuid(0)->pw_name : "uid 0");
}

UNIT_MAIN(cmocka_unit_test(test_peer), cmocka_unit_test(test_no_name))
