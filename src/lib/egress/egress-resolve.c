/* egress-resolve.c — see egress-resolve.h. */
#include "egress-resolve.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct cd_egress_resolver {
	const struct cd_egress_policy *policy;
	pthread_mutex_t mu;
	pthread_cond_t work;
	struct cd_egress_job *todo, **todo_tail; /* FIFO */
	struct cd_egress_job *done, **done_tail; /* FIFO */
	int stopping;
	int efd;
	pthread_t *threads;
	struct cd_egress_job **running; /* per thread: its job, or NULL */
	unsigned nthreads, per_client;
};

struct worker_arg {
	struct cd_egress_resolver *r;
	unsigned i;
};

static void push(struct cd_egress_job ***tail, struct cd_egress_job *job)
{
	job->next = NULL;
	**tail = job;
	*tail = &job->next;
}

static struct cd_egress_job *pop(struct cd_egress_job **head, struct cd_egress_job ***tail)
{
	struct cd_egress_job *job = *head;

	if (job) {
		*head = job->next;
		if (!*head)
			*tail = head;
		job->next = NULL;
	}
	return job;
}

/* Answered: onto the done list, and wake the loop. */
static void answer(struct cd_egress_resolver *r, struct cd_egress_job *job)
{
	uint64_t one = 1;
	ssize_t n;

	push(&r->done_tail, job);
	do {
		n = write(r->efd, &one, sizeof one);
	} while (n < 0 && errno == EINTR);
}

static void decide(const struct cd_egress_policy *p, struct cd_egress_job *job)
{
	job->report_ok = 0;
	job->rc = cd_egress_decide(p, job->host, job->port, &job->d);
	if (job->rc == 0 && !job->d.allow && job->report_only)
		job->report_ok = cd_egress_report_only(p, job->host, job->port, &job->d) == 0;
}

/* The oldest queued job whose client has fewer than per_client jobs
 * running, unlinked; NULL when there is none.  Under the lock. */
static struct cd_egress_job *pick(struct cd_egress_resolver *r)
{
	struct cd_egress_job **pp, *job;
	unsigned i, n;

	for (pp = &r->todo; (job = *pp); pp = &job->next) {
		for (i = n = 0; i < r->nthreads; i++)
			if (r->running[i] && !strcmp(r->running[i]->client, job->client))
				n++;
		if (n < r->per_client)
			break;
	}
	if (!job)
		return NULL;
	*pp = job->next;
	if (!*pp)
		r->todo_tail = pp;
	job->next = NULL;
	return job;
}

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct cd_egress_resolver *r = wa->r;
	unsigned me = wa->i;
	struct cd_egress_job *job = NULL;

	free(wa);
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stopping && !(job = pick(r)))
			pthread_cond_wait(&r->work, &r->mu);
		if (r->stopping)
			break;
		r->running[me] = job;
		pthread_mutex_unlock(&r->mu);
		decide(r->policy, job);
		pthread_mutex_lock(&r->mu);
		r->running[me] = NULL;
		answer(r, job);
		/* A job that waited for its client's share may start now. */
		if (r->todo)
			pthread_cond_broadcast(&r->work);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int cd_egress_resolver_new(const struct cd_egress_policy *policy, unsigned threads,
                           unsigned per_client, struct cd_egress_resolver **ret)
{
	struct cd_egress_resolver *r;
	unsigned i;
	int e = 0;

	if (!policy || !ret || threads == 0 || threads > 64 || per_client == 0 ||
	    per_client > threads)
		return -EINVAL;
	r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->policy = policy;
	r->todo_tail = &r->todo;
	r->done_tail = &r->done;
	r->per_client = per_client;
	r->threads = calloc(threads, sizeof *r->threads);
	r->running = calloc(threads, sizeof *r->running);
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!r->threads || !r->running || r->efd < 0) {
		e = r->efd < 0 ? -errno : -ENOMEM;
		if (r->efd >= 0)
			close(r->efd);
		free(r->threads);
		free(r->running);
		free(r);
		return e;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->work, NULL);
	/* Threads are created with the lock held: none picks a job before
	 * nthreads is final. */
	pthread_mutex_lock(&r->mu);
	for (i = 0; i < threads; i++) {
		struct worker_arg *wa = malloc(sizeof *wa);
		if (!wa) {
			e = ENOMEM;
			break;
		}
		wa->r = r;
		wa->i = i;
		e = pthread_create(&r->threads[i], NULL, worker, wa);
		if (e != 0) {
			free(wa);
			break;
		}
		r->nthreads++;
	}
	pthread_mutex_unlock(&r->mu);
	if (r->nthreads == 0) {
		cd_egress_resolver_free(r);
		return -e;
	}
	*ret = r;
	return 0;
}

int cd_egress_resolver_fd(const struct cd_egress_resolver *r)
{
	return r->efd;
}

void cd_egress_resolver_submit(struct cd_egress_resolver *r, struct cd_egress_job *job)
{
	pthread_mutex_lock(&r->mu);
	if (r->stopping) {
		job->rc = -ECANCELED;
		answer(r, job);
	} else {
		push(&r->todo_tail, job);
		pthread_cond_signal(&r->work);
	}
	pthread_mutex_unlock(&r->mu);
}

struct cd_egress_job *cd_egress_resolver_done(struct cd_egress_resolver *r)
{
	struct cd_egress_job *job;
	uint64_t v;

	pthread_mutex_lock(&r->mu);
	job = pop(&r->done, &r->done_tail);
	if (!r->done) {
		/* Drained under the lock: an answer pushed after this read
		 * writes the eventfd again. */
		while (read(r->efd, &v, sizeof v) < 0 && errno == EINTR)
			;
	}
	pthread_mutex_unlock(&r->mu);
	return job;
}

void cd_egress_resolver_stop(struct cd_egress_resolver *r)
{
	struct cd_egress_job *job;
	unsigned i;

	if (!r || r->stopping)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = 1;
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->mu);
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->threads[i], NULL);
	r->nthreads = 0;
	pthread_mutex_lock(&r->mu);
	while ((job = pop(&r->todo, &r->todo_tail))) {
		job->rc = -ECANCELED;
		answer(r, job);
	}
	pthread_mutex_unlock(&r->mu);
}

void cd_egress_resolver_free(struct cd_egress_resolver *r)
{
	if (!r)
		return;
	cd_egress_resolver_stop(r);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->work);
	close(r->efd);
	free(r->threads);
	free(r->running);
	free(r);
}
