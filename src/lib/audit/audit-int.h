/* audit-int.h — shared between the audit modules only (not a public API):
 * the store behind a log and its genesis hash. */
#ifndef CD_AUDIT_INT_H
#define CD_AUDIT_INT_H

#include "audit.h"
#include "store/store.h"

struct cd_store *cd_audit_store_(struct cd_audit *a);
const unsigned char *cd_audit_genesis_(const struct cd_audit *a);
/* This writer's host name (its chain in a store with one per host). */
const char *cd_audit_host_(const struct cd_audit *a);

#endif
