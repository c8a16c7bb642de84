/* event_note.h - gpud's own events (a check's or a backup's end) appended
 * to the event log from the loop thread, for the status page's "last
 * check" and "last backup" (store_events.h reads them back).
 *
 * Ownership: kind and detail are copied (detail cut at 255 bytes).
 * Threads: the loop thread.
 */
#ifndef GPUD_EVENT_NOTE_H
#define GPUD_EVENT_NOTE_H

struct dbq;

/* Queue the event (job 0) on the database thread; a failure to write it
 * is not reported (a note, not state). Returns 0, GERR_NOMEM or GERR_STATE
 * (the database thread stops). */
int event_note(struct dbq *q, const char *kind, const char *detail);

#endif
