/* The pass/fail bookkeeping of the VM test programs: one "ok: ..." or
 * "FAIL: ..." line per check, counted in check_passed and check_failed. */
#ifndef SOTLS_TESTS_VM_CHECK_H
#define SOTLS_TESTS_VM_CHECK_H

extern int check_passed, check_failed;

/* Prints "ok: " or "FAIL: " and the printf-style message, flushes stdout
 * (the programs fork), and counts the result. */
void check(int ok, const char *fmt, ...);

/* A connected loopback TCP pair (*a connected to *b); exits 2 if the
 * machine cannot make one. */
void vm_tcp_pair(int *a, int *b);

#endif
