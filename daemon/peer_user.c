/* peer_user.c - the Unix user at the other end of gpud's socket
 * (peer_user.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* struct ucred */
#endif
#include "peer_user.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A name that can be an owner: 1..64 bytes, no control character (it is
 * shown in tables and logs). */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n + 1 > PEER_USER_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

void peer_user_name(uid_t uid, char *ret, size_t len)
{
	struct passwd pw, *found = NULL;
	long max = sysconf(_SC_GETPW_R_SIZE_MAX);
	/* A bounded buffer: an entry larger than this is read as no name. */
	size_t size = max > 0 && max < 65536 ? (size_t)max : 16384;
	char *buf = malloc(size);

	if (buf && getpwuid_r(uid, &pw, buf, size, &found) == 0 && found &&
	    found->pw_name && name_ok(found->pw_name))
		snprintf(ret, len, "%s", found->pw_name);
	else
		snprintf(ret, len, "uid %lu", (unsigned long)uid);
	free(buf);
}

int peer_user_of_fd(int fd, char *ret, size_t len)
{
	struct ucred cred;
	socklen_t n = sizeof(cred);

	if (len)
		ret[0] = '\0';
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) < 0)
		return -errno;
	if (n != sizeof(cred))
		return -EINVAL;
	peer_user_name(cred.uid, ret, len);
	return 0;
}
