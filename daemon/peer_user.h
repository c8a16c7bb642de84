/* peer_user.h - who is at the other end of gpud's Unix socket: the Unix
 * user of the process that connected (SO_PEERCRED), by name, which gpud
 * records as the owner of the jobs that connection submits.
 *
 * Threads: any; it keeps nothing. getpwuid_r may ask the system's user
 * database (NSS), which is local files on the hosts gpud runs on.
 */
#ifndef GPUD_PEER_USER_H
#define GPUD_PEER_USER_H

#include <stddef.h>
#include <sys/types.h>

/* What ret holds at most, its NUL included: owners are 1..64 bytes. */
#define PEER_USER_MAX 65

/* The name of Unix user uid into ret (len >= PEER_USER_MAX), or "uid N"
 * when it has none, or one longer than 64 bytes or with a control
 * character. Always writes ret. */
void peer_user_name(uid_t uid, char *ret, size_t len);

/* The user of the peer of the connected Unix socket fd into ret (as
 * peer_user_name). 0, or a negative errno when the kernel does not say
 * (ret is then ""). */
int peer_user_of_fd(int fd, char *ret, size_t len);

#endif
