/*
 * Constant-time validation under valgrind (as BoringSSL's does): the ct test
 * builds the secret-handling code with SOTLS_CT_VALGRIND, so secrets are
 * marked undefined where they are made and memcheck reports every branch
 * and address that depends on them. A value that is public by design (the
 * outcome of a check, a result about to be sent) is marked defined again.
 * In the library both are nothing.
 */
#ifndef SOTLS_CRYPTO_CT_VALGRIND_H
#define SOTLS_CRYPTO_CT_VALGRIND_H

#ifdef SOTLS_CT_VALGRIND
#include <valgrind/memcheck.h>
#define SOTLS_CT_SECRET(p, len) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (len)))
#define SOTLS_CT_PUBLIC(p, len) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (len)))
#else
#define SOTLS_CT_SECRET(p, len) ((void)(p), (void)(len))
#define SOTLS_CT_PUBLIC(p, len) ((void)(p), (void)(len))
#endif

#endif
