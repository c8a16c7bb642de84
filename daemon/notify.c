/* notify.c - sd_notify without libsystemd: one datagram per message. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gerr.h"
#include "notify.h"

int notify_send(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	size_t n;
	int fd, rc = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	/* Absolute paths and abstract sockets ('@' stands for the NUL). */
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return GERR_INVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return GERR_IO;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   salen) < 0)
		rc = GERR_IO;
	close(fd);
	return rc;
}

uint64_t notify_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (!usec || !*usec)
		return 0;
	if (pid && *pid) {
		errno = 0;
		unsigned long p = strtoul(pid, &end, 10);
		if (errno || *end || p != (unsigned long)getpid())
			return 0;
	}
	/* Digits only: strtoull would take blanks and a minus sign (-5 as
	 * 2^64 - 5). */
	if (*usec < '0' || *usec > '9')
		return 0;
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end || v == 0)
		return 0;
	return v;
}
