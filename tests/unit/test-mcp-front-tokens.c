/* test-mcp-front-tokens.c — the agent tokens of `cordon mcp --listen` in
 * the SQLite state database (test-store-pg.c checks PostgreSQL): a token
 * is found by its hash only while in force (not revoked, not expired; 0
 * never expires), across connections; a revoked one stays listed;
 * revoking twice or an unknown id is -ENOENT. */
#include "../tap.h"

#include "store/state.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int found(const struct cd_agent_token *t, void *ctx)
{
	snprintf(ctx, 128, "%s|%s", t->agent, t->policy ? t->policy : "-");
	return 0;
}

static int count(const struct cd_agent_token *t, void *ctx)
{
	(*(int *)ctx) += t->revoked ? 100 : 1;
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/cordon-tokens.XXXXXX", path[256], got[128];
	struct cd_state *a = NULL, *b = NULL;
	struct cd_store *sa, *sb;
	struct cd_err err = { 0, "" };
	int64_t now = (int64_t)time(NULL);
	int n = 0;
	struct cd_agent_token t1 = { .id = "tk-1", .hash = "h1", .agent = "alice", .created = now };
	struct cd_agent_token t2 = { .id = "tk-2",
		                     .hash = "h2",
		                     .agent = "bob",
		                     .policy = "/p.yaml",
		                     .created = now,
		                     .expires = now + 60 };
	struct cd_agent_token t3 = {
		.id = "tk-3", .hash = "h3", .agent = "carol", .created = now - 9, .expires = now - 1
	};

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/state.db", dir);
	ok(cd_state_open(path, &a, &err) == 0, "state database opens (%s)", err.msg);
	ok(cd_state_open(path, &b, &err) == 0, "a second connection (%s)", err.msg);
	if (!a || !b)
		return tap_done();
	sa = cd_state_store(a);
	sb = cd_state_store(b);
	is_int(sa->ops->agent_token_add(sa, &t1, &err), 0, "a token without expiry %s", err.msg);
	is_int(sa->ops->agent_token_add(sa, &t2, &err), 0, "a token with a policy %s", err.msg);
	is_int(sa->ops->agent_token_add(sa, &t3, &err), 0, "an expired token %s", err.msg);
	is_int(sa->ops->agent_token_add(sa, &t1, &err) < 0, 1, "an id is stored once");
	is_int(sb->ops->agent_token_find(sb, "h1", now, found, got, &err), 0, "found by its hash");
	is_str(got, "alice|-", "... its agent, no policy");
	is_int(sb->ops->agent_token_find(sb, "h2", now, found, got, &err), 0, "the second one");
	is_str(got, "bob|/p.yaml", "... its agent and policy");
	is_int(sb->ops->agent_token_find(sb, "h2", now + 60, found, got, &err), -ENOENT,
	       "not at its expiry");
	is_int(sb->ops->agent_token_find(sb, "h3", now, found, got, &err), -ENOENT,
	       "an expired token is not found");
	is_int(sb->ops->agent_token_find(sb, "tk-1", now, found, got, &err), -ENOENT,
	       "an id is not a hash");
	is_int(sa->ops->agent_token_revoke(sa, "tk-1", now, &err), 0, "revoked %s", err.msg);
	is_int(sb->ops->agent_token_find(sb, "h1", now, found, got, &err), -ENOENT,
	       "a revoked token is not found from the other connection");
	is_int(sa->ops->agent_token_revoke(sa, "tk-1", now, &err), -ENOENT, "revoked once");
	is_int(sa->ops->agent_token_revoke(sa, "tk-9", now, &err), -ENOENT, "an unknown id");
	is_int(sb->ops->agent_token_list(sb, count, &n, &err), 0, "listed");
	is_int(n, 102, "... all three, one revoked");
	cd_state_close(a);
	cd_state_close(b);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
