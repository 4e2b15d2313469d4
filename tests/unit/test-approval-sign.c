/* test-approval-sign.c — approvers' signed decisions (approval-sign.h):
 * a signature verifies only for its request, call, decision, approver and
 * time, only with the key the policy pins (or a console key); unsigned
 * decisions only from a local store and only for approvers without a
 * key; key files 0600 of this uid; policy diff counts keys as widening. */
#include "../tap.h"

#include "gate/approval-sign.h"
#include "policy/policy-diff.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct cd_policy *load(const char *keys, const char *consoles)
{
	char buf[2048];
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	int n = snprintf(
	        buf, sizeof buf,
	        "version: 1\nagents:\n  - {id: coder, owner: alice}\ntools: []\ngrants: []\n"
	        "approvers:\n  people: [alice, carol]\n%s%s",
	        keys, consoles);

	if (cd_policy_load_buf("p.yaml", buf, (size_t)n, &p, &err) < 0)
		diag("policy: %s", err.msg);
	return p;
}

static int v(const struct cd_policy *p, int shared, const struct cd_approval *a)
{
	char why[256];

	return cd_approval_verify(p, shared, a, NULL, 0, why, sizeof why);
}

int main(void)
{
	char dir[] = "/tmp/cordon-sign.XXXXXX", ka[256], km[256], pa[64], pm[64], line[128];
	char sig[CD_APPROVAL_SIG_MAX], sig2[CD_APPROVAL_SIG_MAX];
	struct cd_approver_key *a = NULL, *m = NULL;
	struct cd_policy *p, *pc, *pn;
	struct cd_err err = { 0, "" };
	struct cd_approval r;
	struct stat st;
	size_t w = 0, nw = 0;

	tap_start(30);
	if (!mkdtemp(dir))
		return 1;
	snprintf(ka, sizeof ka, "%s/sub/alice.key", dir);
	snprintf(km, sizeof km, "%s/mallory.key", dir);
	ok(cd_approver_keygen(ka, pa, &err) == 0 && cd_approver_keygen(km, pm, &err) == 0,
	   "keygen (%s)", err.msg);
	ok(stat(ka, &st) == 0 && (st.st_mode & 0777) == 0600, "the secret key is 0600");
	ok(cd_approver_keygen(ka, line, &err) < 0, "keygen never overwrites a key");
	err.msg[0] = '\0';
	ok(cd_approver_key_load(ka, &a, &err) == 0 && cd_approver_key_load(km, &m, &err) == 0,
	   "keys load (%s)", err.msg);
	cd_approver_key_public(a, line);
	is_str(line, pa, "the loaded key's public half is what keygen printed");
	chmod(km, 0640);
	ok(cd_approver_key_load(km, &(struct cd_approver_key *){ NULL }, &err) == -CD_E_DENIED,
	   "a key readable by its group is refused");

	snprintf(line, sizeof line, "  keys: {alice: \"%s\"}\n", pa);
	p = load(line, "");
	ok(p != NULL, "a policy with alice's key loads");

	memset(&r, 0, sizeof r);
	snprintf(r.id, sizeof r.id, "ap-0123456789abcdef");
	memset(r.args_sha256, 'a', 64);
	r.run_id = "run-1";
	r.agent = "coder";
	r.tool = "shell";
	r.action = "execute";
	r.created = 100;
	r.deadline = 200;
	r.status = "approved";
	r.decided_by = "alice";
	r.decided_at = 150;
	ok(cd_approval_sign(a, &r, 1, "alice", 150, sig) == 0, "alice signs");
	r.signature = sig;
	ok(v(p, 1, &r) == 1, "her signature verifies through a shared store");
	r.status = "denied";
	ok(v(p, 1, &r) == 0, "... not as a denial");
	r.status = "approved";
	r.args_sha256[0] = 'b';
	ok(v(p, 1, &r) == 0, "... not for another call's hash");
	r.args_sha256[0] = 'a';
	snprintf(r.id, sizeof r.id, "ap-0123456789abcdee");
	ok(v(p, 1, &r) == 0, "... not for another request");
	snprintf(r.id, sizeof r.id, "ap-0123456789abcdef");
	r.decided_at = 151;
	ok(v(p, 1, &r) == 0, "... not at another time");
	r.decided_at = 250;
	ok(v(p, 0, &r) == 0, "... nor after the deadline");
	r.decided_at = 150;
	r.decided_by = "carol";
	ok(v(p, 0, &r) == 0, "... nor in carol's name");
	r.decided_by = "alice";
	ok(cd_approval_sign(m, &r, 1, "alice", 150, sig2) == 0 && (r.signature = sig2) &&
	           v(p, 0, &r) == 0,
	   "mallory's signature in alice's name is refused");
	r.signature = "ed25519:!!";
	ok(v(p, 0, &r) == 0, "a malformed signature is refused");
	r.signature = NULL;
	ok(v(p, 0, &r) == 0, "unsigned in alice's name (she has a key): refused, even locally");
	r.decided_by = "carol";
	ok(v(p, 0, &r) == 1, "unsigned in carol's name (no key): taken from a local store");
	ok(v(p, 1, &r) == 0, "... never through a shared store");

	snprintf(line, sizeof line, "  consoles: [\"%s\"]\n", pm);
	pc = load("", line);
	ok(pc != NULL, "a policy with a console key loads");
	r.signature = sig2; /* mallory's key, as the console's */
	r.decided_by = "alice";
	ok(v(pc, 1, &r) == 1, "a console key signs for an approver");
	ok(v(p, 1, &r) == 0, "... only where the policy lists it");

	ok(load("  keys: {alice: \"ed25519:AAAA\"}\n", "") == NULL, "a short key is a load error");
	snprintf(line, sizeof line, "  keys: {mallory: \"%s\"}\n", pa);
	ok(load(line, "") == NULL, "a key for someone not in people is a load error");
	ok(cd_policy_diff(pc, p, NULL, NULL, &w, &nw) == 0 && w == 1,
	   "policy diff: a key added widens (%zu)", w);
	snprintf(line, sizeof line, "  keys: {alice: \"%s\"}\n", pm);
	pn = load(line, "");
	ok(pn && cd_policy_diff(p, pn, NULL, NULL, &w, &nw) == 0 && w == 1,
	   "policy diff: a changed key widens (%zu)", w);
	ok(cd_policy_diff(p, p, NULL, NULL, &w, &nw) == 0 && w == 0 && nw == 0,
	   "policy diff: the same keys change nothing (control)");
	cd_policy_free(p);
	cd_policy_free(pc);
	cd_policy_free(pn);
	cd_approver_key_free(a);
	cd_approver_key_free(m);
	snprintf(line, sizeof line, "rm -rf %s", dir);
	if (system(line) != 0)
		diag("cannot remove %s", dir);
	return tap_done();
}
