/* ctl_check.h - `gpuctl check`'s report in words, from gpud's reply
 * (control.h's "check"): SQLite's verdict, the blobs, each problem with
 * the job and lease it touches, and what to do. The reply's strings must
 * already be escaped for the terminal (ctl_text.h). Any thread; keeps
 * nothing; reply is borrowed.
 */
#ifndef GPUD_CTL_CHECK_H
#define GPUD_CTL_CHECK_H

#include <stdio.h>
#include <jansson.h>

void ctl_check_print(FILE *f, const json_t *reply);

#endif
