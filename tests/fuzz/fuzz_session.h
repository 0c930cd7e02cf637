/*
 * What fuzz-session and the program that makes its seeds
 * (make_session_seeds.c) must agree on: the resumption clock both run at,
 * so the committed seeds are fresh whatever the date, and the server name
 * the sessions are for.
 */
#ifndef SOTLS_FUZZ_SESSION_H
#define SOTLS_FUZZ_SESSION_H

/* 2027-01-15, Unix seconds. */
#define FUZZ_SESSION_NOW 1800000000
#define FUZZ_SESSION_NAME "localhost"

#endif
