/* control_page.c - `gpuctl page-link`: a link to the status page for
 * whoever holds a viewer's or an admin's credential. A new random key is
 * made here (pagekey.h), its hash stored with the caller's role and its
 * end (store_pagekey_add), and the reply carries the page's address with
 * the key, which gpud keeps nowhere. With "revoke": the links end
 * instead, a viewer's the viewers' links, an admin's every link.
 *
 * The row keeps the caller's role (what --revoke goes by) and the
 * caller's name (made_by: the credential's, or the local Unix user).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "control_internal.h"
#include "dbq.h"
#include "gerr.h"
#include "gpud.h"
#include "pagekey.h"
#include "store.h"

_Static_assert(PAGEKEY_HASH == STORE_PAGEKEY_HASH, "a page key's hash");

/* What one page_link request carries between its steps (r->page). */
struct page_step {
	char key[PAGEKEY_HEX + 1];
	uint8_t hash[PAGEKEY_HASH];
	char url[sizeof(((struct gpud *)0)->http_url) + 16 + PAGEKEY_HEX];
	double now, until;
	int64_t revoked;
};

static const char *owner_name(enum auth_role role)
{
	return role == AUTH_ROLE_ADMIN ? "admin" : "viewer";
}

static void page_work(struct store *st, void *arg)
{
	struct ctl_req *r = arg;
	struct page_step *p = r->page;
	char by[CTLCMD_OWNER_MAX + 32] = "";
	int rc;

	if (r->caller_name[0])
		snprintf(by, sizeof(by), "%s by %s", owner_name(r->caller),
			 r->caller_name);
	if (r->in.revoke) {
		rc = store_pagekey_revoke(st, r->caller == AUTH_ROLE_ADMIN ? NULL :
					  owner_name(r->caller), &p->revoked);
		if (!rc)
			store_event(st, p->now, 0, 0, 0, 0, "page_link_revoke",
				    by[0] ? by : owner_name(r->caller));
	} else {
		rc = store_pagekey_add(st, p->hash, owner_name(r->caller),
				       r->caller_name[0] ? r->caller_name : NULL,
				       p->now, p->until);
	}
	r->storage_rc = rc;
	if (rc)
		snprintf(r->err, sizeof(r->err), "cannot store the page link: %s",
			 gerr_str(rc));
}

static void page_after(void *arg)
{
	struct ctl_req *r = arg;
	struct page_step *p = r->page;

	gpud_storage_outcome(r->d, r->storage_rc, "storing a page link");
	if (!r->err[0]) {
		r->reply = r->in.revoke ?
			ctlcmd_reply_encode(CTLCMD_PAGE_LINK, &(struct ctlcmd_reply){
				.revoked_links = p->revoked }) :
			ctlcmd_reply_encode(CTLCMD_PAGE_LINK, &(struct ctlcmd_reply){
				.url = p->url, .key = p->key, .expires_at = p->until });
		if (!r->reply)
			snprintf(r->err, sizeof(r->err), "out of memory");
	}
	sodium_memzero(p, sizeof(*p));
	free(p);
	r->page = NULL;
	ctl_finish(r);
}

void ctl_page_link_start(struct ctl_req *r)
{
	struct page_step *p;

	if (!r->in.revoke && !r->d->http_url[0]) {
		if (r->d->cfg.http_port < 0)
			snprintf(r->err, sizeof(r->err), "gpud serves no status "
				 "page (--http off)");
		else /* the default address was taken (server.c) */
			snprintf(r->err, sizeof(r->err), "gpud serves no status "
				 "page: %s:%d was taken when it started (--http "
				 "HOST:PORT picks another)", r->d->cfg.http_host,
				 r->d->cfg.http_port);
		ctl_finish(r);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		ctl_finish(r);
		return;
	}
	p->now = gclock_wall();
	p->until = p->now + (double)r->in.valid;
	if (!r->in.revoke) {
		pagekey_new(p->key, p->hash);
		snprintf(p->url, sizeof(p->url), "%s/login?key=%s",
			 r->d->http_url, p->key);
	}
	r->page = p;
	if (dbq_submit(r->d->dbq, page_work, page_after, r)) {
		sodium_memzero(p, sizeof(*p));
		free(p);
		r->page = NULL;
		snprintf(r->err, sizeof(r->err), "gpud is shutting down");
		ctl_finish(r);
	}
}
