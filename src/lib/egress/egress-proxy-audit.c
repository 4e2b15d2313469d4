/* egress-proxy-audit.c — the egress proxy's records (egress-proxy.h) as
 * audit log entries: one record per connection, or many in one
 * transaction.
 *
 * Trust boundary: the host, method and reason come from the client; they
 * are stored as JSON strings (escaped by jansson), never interpreted. */
#include "egress-proxy.h"

#include "audit/audit.h"
#include "egress-addr.h"
#include "mask/logmask.h"
#include "util/util.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* ---- the audit record --------------------------------------------- */

static json_t *addr_json(const struct sockaddr_storage *ss)
{
	char text[64];

	if (cd_addr_format(ss, text, sizeof text) < 0)
		return json_null();
	return json_string(text);
}

static int set_new(json_t *o, const char *key, json_t *v)
{
	return v ? json_object_set_new(o, key, v) : -1;
}

static json_t *event_details(const struct cd_egress_event *ev)
{
	json_t *o = json_object(), *a;
	size_t i;
	int r = 0;

	if (!o)
		return NULL;
	if (ev->client)
		r |= set_new(o, "client", json_string(ev->client));
	if (ev->method)
		r |= set_new(o, "method", json_string(ev->method));
	if (ev->host) {
		r |= set_new(o, "host", json_string(ev->host));
		r |= set_new(o, "port", json_integer(ev->port));
	}
	if (ev->request) {
		struct cd_buf b;
		cd_buf_init(&b, 4 * ev->request_len + 16);
		if (cd_buf_escape(&b, ev->request, ev->request_len) == 0)
			r |= set_new(o, "request", json_string(b.data ? b.data : ""));
		cd_buf_release(&b);
	}
	if (ev->status)
		r |= set_new(o, "status", json_integer(ev->status));
	if (ev->naddrs) {
		a = json_array();
		for (i = 0; a && i < ev->naddrs; i++)
			r |= json_array_append_new(a, addr_json(&ev->addrs[i]));
		r |= set_new(o, "addresses", a);
	}
	if (ev->connect)
		r |= set_new(o, "address", addr_json(ev->connect));
	if (ev->has_result) {
		r |= set_new(o, "bytes_up", json_integer((json_int_t)ev->bytes_up));
		r |= set_new(o, "bytes_down", json_integer((json_int_t)ev->bytes_down));
	}
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One event as a record; *ret_details is the caller's to free. */
static int to_record(const struct cd_egress_audit *a, const struct cd_egress_event *ev,
                     struct cd_record *rec, char target[CD_HOST_MAX + 8], char **ret_details,
                     json_t **ret_keep)
{
	char *details = NULL;
	json_t *o;
	int n;

	o = event_details(ev);
	if (!o)
		return -ENOMEM;
	memset(rec, 0, sizeof *rec);
	rec->kind = ev->kind;
	rec->run_id = a->run_id;
	rec->agent = a->agent;
	rec->action = "network";
	if (ev->host) {
		n = snprintf(target, CD_HOST_MAX + 8, "%s:%u", ev->host, ev->port);
		if (n > 0 && n < CD_HOST_MAX + 8)
			rec->target = target;
	}
	if (strcmp(ev->kind, "egress") == 0)
		rec->decision = ev->report_only ? "report-only-deny" : ev->allow ? "allow" : "deny";
	rec->grant_ids = ev->rule;
	rec->reason = ev->reason;
	if (ev->has_result) {
		rec->has_duration = 1;
		rec->duration_ms = ev->duration_ms;
	}
	*ret_keep = NULL;
	if (a->mask && cd_logmask_record(a->masker, a->mask, rec, o, ret_keep) < 0) {
		json_decref(o);
		return -ENOMEM;
	}
	details = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!details) {
		json_decref(*ret_keep);
		*ret_keep = NULL;
		return -ENOMEM;
	}
	rec->details_json = details;
	*ret_details = details;
	return 0;
}

int cd_egress_audit_log(const struct cd_egress_event *ev, void *ctx)
{
	return cd_egress_audit_log_many(ev, 1, ctx);
}

int cd_egress_audit_log_many(const struct cd_egress_event *evs, size_t n, void *ctx)
{
	struct cd_egress_audit *a = ctx;
	struct cd_record recs[CD_EGRESS_RESULTS_PENDING + 1];
	char targets[CD_EGRESS_RESULTS_PENDING + 1][CD_HOST_MAX + 8];
	char *details[CD_EGRESS_RESULTS_PENDING + 1];
	json_t *keep[CD_EGRESS_RESULTS_PENDING + 1];
	size_t i, made = 0;
	int r = 0;

	if (!a || !a->audit || !evs || n == 0 || n > CD_EGRESS_RESULTS_PENDING + 1)
		return -EINVAL;
	for (i = 0; i < n && r == 0; i++) {
		r = to_record(a, &evs[i], &recs[i], targets[i], &details[i], &keep[i]);
		if (r == 0)
			made++;
	}
	if (r < 0)
		r = cd_err_set(&a->err, r, "egress record: out of memory");
	else if (n == 1)
		r = cd_audit_append(a->audit, &recs[0], NULL, &a->err);
	else
		r = cd_audit_append_many(a->audit, recs, n, NULL, &a->err);
	for (i = 0; i < made; i++) {
		free(details[i]);
		json_decref(keep[i]);
	}
	return r;
}
