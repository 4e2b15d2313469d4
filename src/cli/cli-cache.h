/* cli-cache.h — package caches (cli-cache.c). */
#ifndef CD_CLI_CACHE_H
#define CD_CLI_CACHE_H

#include <stddef.h>

/* The host directory of cache NAME (namelen bytes) of `agent` (NULL: runs
 * without --agent), created 0700 when missing, into out.  0, or -1 with a
 * one-line reason printed (bad name, no state directory). */
int cli_cache_dir(const char *agent, const char *name, size_t namelen, char *out, size_t cap);

#endif
