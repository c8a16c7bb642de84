/* procstat.h - this process's own figures, as every Prometheus client
 * library exports them (process_*): start time, CPU seconds, resident and
 * virtual memory, open and allowed descriptors; read from /proc (Linux).
 *
 * Threads: any (no state). Nothing is kept.
 */
#ifndef GPUD_PROCSTAT_H
#define GPUD_PROCSTAT_H

#include <stdint.h>

struct procstat {
	double start_time;        /* Unix seconds */
	double cpu_seconds;       /* user + system */
	uint64_t resident_bytes, virtual_bytes;
	uint64_t open_fds, max_fds;
};

/* Read them into *ret. Returns 0, or GERR_IO when /proc cannot be read
 * (*ret then unspecified). */
int procstat_read(struct procstat *ret);

#endif
