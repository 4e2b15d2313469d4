/* seccomp-sys.h — libseccomp's own <seccomp.h>, which cordon's seccomp.h
 * shadows on the -Isrc/lib include path.
 *
 * Include it with angle brackets, `#include <seccomp-sys.h>`: then this file
 * is found through -Isrc/lib and #include_next continues the search after
 * that directory, reaching the system header.  (Found relative to the
 * including file, with quotes, it would find cordon's header again, and
 * the first SCMP_* use fails to compile.) */
#ifndef CD_SECCOMP_SYS_H
#define CD_SECCOMP_SYS_H

#include_next <seccomp.h>

#endif
