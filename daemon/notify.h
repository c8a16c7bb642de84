/* notify.h - the systemd notification protocol (sd_notify), in-tree.
 *
 * When gpud runs under systemd with Type=notify, $NOTIFY_SOCKET names a
 * datagram socket; gpud sends "READY=1" once it serves, "STATUS=..." lines
 * with a summary of its jobs, "WATCHDOG=1" pings, and "STOPPING=1".
 * Without $NOTIFY_SOCKET every call does nothing and returns 0.
 * Thread-safe (no state kept).
 */
#ifndef GPUD_NOTIFY_H
#define GPUD_NOTIFY_H

#include <stdint.h>

/* Send one message (e.g. "READY=1\nSTATUS=serving"). Returns 0, or
 * GERR_IO / GERR_INVAL when the socket cannot be reached or is malformed. */
int notify_send(const char *msg);

/* The watchdog interval systemd asked for, in microseconds, or 0 when none
 * (from $WATCHDOG_USEC, honouring $WATCHDOG_PID). */
uint64_t notify_watchdog_usec(void);

#endif
