/* ctl_check.h - `gpuctl check`'s and `gpuctl backup`'s reports in words,
 * from gpud's replies (control.h's "check" and "backup"): SQLite's
 * verdict, the blobs, each problem with the job and lease it touches, and
 * what to do. The reply's strings must
 * already be escaped for the terminal (ctl_text.h). Any thread; keeps
 * nothing; reply is borrowed.
 */
#ifndef GPUD_CTL_CHECK_H
#define GPUD_CTL_CHECK_H

#include <stdio.h>
#include <jansson.h>

void ctl_check_print(FILE *f, const json_t *reply);
/* Where the backup went, how much, how long, and its check. */
void ctl_backup_print(FILE *f, const json_t *reply);

#endif
