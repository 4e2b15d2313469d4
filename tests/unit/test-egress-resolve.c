/* test-egress-resolve.c — the proxy's decisions off its event loop
 * (egress-resolve.h): answers come back through the eventfd with the
 * decision the policy makes; a slow lookup holds only its own job; one
 * client gets at most its share of the threads; stop hands unanswered
 * jobs back cancelled.  The resolver is injected: "slow*" names block
 * until the test releases them. */
#include "../tap.h"

#include "egress/egress-policy.h"
#include "egress/egress-resolve.h"
#include "util/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released, slow_running, slow_running_max;

static int fake_resolve(const char *host, struct sockaddr_storage *addrs, size_t max, void *ctx)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&addrs[0];

	(void)ctx;
	if (!strncmp(host, "slow", 4)) {
		pthread_mutex_lock(&mu);
		slow_running++;
		if (slow_running > slow_running_max)
			slow_running_max = slow_running;
		while (!released)
			pthread_cond_wait(&cv, &mu);
		slow_running--;
		pthread_mutex_unlock(&mu);
	}
	if (!strncmp(host, "private", 7)) {
		memset(a, 0, sizeof *a);
		a->sin_family = AF_INET;
		inet_pton(AF_INET, "10.0.0.1", &a->sin_addr);
		return 1;
	}
	if (max < 1)
		return 0;
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	inet_pton(AF_INET, "93.184.216.34", &a->sin_addr);
	return 1;
}

static struct cd_egress_job *job_new(const char *host, const char *client, int tag)
{
	struct cd_egress_job *j = calloc(1, sizeof *j);

	snprintf(j->host, sizeof j->host, "%s", host);
	snprintf(j->client, sizeof j->client, "%s", client);
	j->port = 443;
	j->owner = (void *)(long)tag;
	return j;
}

/* The next answer, waiting up to 5 s on the eventfd; NULL on time-out. */
static struct cd_egress_job *next_answer(struct cd_egress_resolver *r)
{
	struct pollfd p = { cd_egress_resolver_fd(r), POLLIN, 0 };
	struct cd_egress_job *j = cd_egress_resolver_done(r);

	if (j)
		return j;
	if (poll(&p, 1, 5000) != 1)
		return NULL;
	return cd_egress_resolver_done(r);
}

static void release_slow(void)
{
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

int main(void)
{
	struct cd_egress_policy *p;
	struct cd_egress_resolver *r;
	struct cd_egress_job *j;
	struct cd_err err = { 0, "" };
	int i, n;

	tap_start(60);
	if (cd_egress_policy_new(&p) < 0 ||
	    cd_egress_policy_add(p, "*.example.com:443", &err) < 0 ||
	    cd_egress_policy_add(p, "fast.test:443", &err) < 0 ||
	    cd_egress_policy_add(p, "private.test:443", &err) < 0 ||
	    cd_egress_policy_add(p, "slow.test:443", &err) < 0) {
		ok(0, "policy: %s", err.msg);
		return tap_done();
	}
	cd_egress_policy_set_resolver(p, fake_resolve, NULL);
	is_int(cd_egress_resolver_new(p, 0, 1, &r), -EINVAL, "no threads is refused");
	is_int(cd_egress_resolver_new(p, 4, 5, &r), -EINVAL,
	       "a share above the threads is refused");
	is_int(cd_egress_resolver_new(p, 4, 2, &r), 0, "a pool of 4 threads, 2 per client");

	/* Decisions as the policy makes them. */
	cd_egress_resolver_submit(r, job_new("fast.test", "a", 1));
	j = next_answer(r);
	ok(j && j->rc == 0 && j->d.allow,
	   "an allowed name is allowed, answered through the eventfd");
	free(j);
	cd_egress_resolver_submit(r, job_new("private.test", "a", 2));
	j = next_answer(r);
	ok(j && j->rc == 0 && !j->d.allow && strstr(j->d.reason, "10.0.0.1 is private"),
	   "a name resolving to a private address is refused with the reason (%s)",
	   j ? j->d.reason : "none");
	free(j);
	cd_egress_resolver_submit(r, job_new("evil.example.org", "a", 3));
	j = next_answer(r);
	ok(j && j->rc == 0 && !j->d.allow, "a name off the allowlist is refused");
	free(j);
	ok(cd_egress_resolver_done(r) == NULL, "nothing else waits");

	/* Five slow lookups of client a, then a quick one of a and one of b:
	 * a holds 2 threads and its later jobs wait their turn (first come,
	 * first served within a client); b's is answered at once. */
	for (i = 0; i < 5; i++)
		cd_egress_resolver_submit(r, job_new("slow.test", "a", 10 + i));
	cd_egress_resolver_submit(r, job_new("fast.test", "a", 21));
	cd_egress_resolver_submit(r, job_new("fast.test", "b", 20));
	j = next_answer(r);
	ok(j && j->owner == (void *)20L,
	   "another client's quick lookup is answered while slow ones hang");
	free(j);
	ok(cd_egress_resolver_done(r) == NULL, "the slow client's own quick one waits its turn");
	/* Both of a's threads may not have reached the slow lookup yet on a
	 * loaded machine: give them up to 10 s (a third would show as 3). */
	for (i = 0; i < 1000; i++) {
		pthread_mutex_lock(&mu);
		n = slow_running_max;
		pthread_mutex_unlock(&mu);
		if (n >= 2)
			break;
		usleep(10000);
	}
	usleep(50000);
	pthread_mutex_lock(&mu);
	n = slow_running_max;
	pthread_mutex_unlock(&mu);
	is_int(n, 2, "one client's slow lookups ran on 2 threads at most");
	release_slow();
	for (i = 0; i < 6; i++) {
		j = next_answer(r);
		ok(j && j->rc == 0 && j->d.allow, "client a's job %d answered once released",
		   i + 1);
		free(j);
	}
	pthread_mutex_lock(&mu);
	n = slow_running_max;
	pthread_mutex_unlock(&mu);
	is_int(n, 2, "  never more than 2 of them at once");

	/* Stop: what was not answered comes back cancelled. */
	pthread_mutex_lock(&mu);
	released = 0;
	pthread_mutex_unlock(&mu);
	for (i = 0; i < 4; i++)
		cd_egress_resolver_submit(r, job_new("slow.test", "c", 30 + i));
	while (1) {
		pthread_mutex_lock(&mu);
		n = slow_running;
		pthread_mutex_unlock(&mu);
		if (n == 2)
			break;
		sched_yield();
	}
	release_slow(); /* the two running finish; stop cancels the rest */
	cd_egress_resolver_stop(r);
	{
		int done = 0, cancelled = 0;
		while ((j = cd_egress_resolver_done(r))) {
			if (j->rc == -ECANCELED)
				cancelled++;
			else if (j->rc == 0)
				done++;
			free(j);
		}
		is_int(done + cancelled, 4, "stop hands every job back");
		ok(done >= 2, "  the running ones answered (%d), the rest cancelled (%d)", done,
		   cancelled);
	}
	cd_egress_resolver_submit(r, job_new("fast.test", "a", 40));
	j = cd_egress_resolver_done(r);
	ok(j && j->rc == -ECANCELED, "a job submitted after stop comes back cancelled");
	free(j);
	cd_egress_resolver_free(r);
	cd_egress_resolver_free(NULL);
	cd_egress_policy_free(p);
	return tap_done();
}
