/* ctl_check.h - `gpuctl check`'s and `gpuctl backup`'s reports in words,
 * from gpud's decoded replies (common/ctlcmd.h's struct ctlcmd_reply, as
 * control.h's "check" and "backup" fill it): SQLite's verdict, the blobs,
 * each problem with the job and lease it touches, and what to do. The
 * reply's strings must already be escaped for the terminal (ctl_text.h).
 * Any thread; keeps nothing; reply is borrowed.
 */
#ifndef GPUD_CTL_CHECK_H
#define GPUD_CTL_CHECK_H

#include <stdio.h>

#include "ctlcmd.h"

void ctl_check_print(FILE *f, const struct ctlcmd_reply *reply);
/* Where the backup went, how much, how long, and its check. */
void ctl_backup_print(FILE *f, const struct ctlcmd_reply *reply);

#endif
