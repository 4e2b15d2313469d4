/* oci-int.h — shared inside the oci module only. */
#ifndef CD_OCI_INT_H
#define CD_OCI_INT_H

#include "oci-spec.h"

#include <jansson.h>

/* linux.seccomp (oci-seccomp.c): NULL `sc` leaves *ret NULL.  The profile
 * is checked and bounded; a listener (SCMP_ACT_NOTIFY, listenerPath) is
 * refused; SCMP_ACT_TRACE, with no tracer here, is errno ENOSYS, as the
 * kernel answers without one.  architectures and flags are ignored
 * (cordon's filter takes the native ABI only).  Free with
 * cd_oci_seccomp_free. */
int cd_oci_parse_seccomp(json_t *sc, struct cd_seccomp_profile **ret, struct cd_err *err);
void cd_oci_seccomp_free(struct cd_seccomp_profile *p);

#endif
