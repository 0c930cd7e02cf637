/*
 * lib/record/record_buffers.c: the per-thread spare is reused, a second
 * spare is freed, spares stay on their thread and go with it (LeakSanitizer
 * in the sanitizer run sees any that does not), bad arguments get NULL.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "record_buffers.h"

#define SIZE (64 * 1024)

static void test_spare_reused(void **state)
{
	(void)state;
	void *a = sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE);
	void *b = sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal((uintptr_t)a % 64, 0);
	sotls_recbuf_put(SOTLS_RECBUF_TX, a); /* becomes the spare */
	sotls_recbuf_put(SOTLS_RECBUF_TX, b); /* the slot is taken: freed */
	assert_ptr_equal(sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE), a);
	/* Kinds do not mix. */
	void *rx = sotls_recbuf_get(SOTLS_RECBUF_RX, SIZE);
	assert_ptr_not_equal(rx, a);
	sotls_recbuf_put(SOTLS_RECBUF_RX, rx);
	sotls_recbuf_put(SOTLS_RECBUF_TX, a);
	sotls_recbuf_put(SOTLS_RECBUF_TX, NULL);
}

static void *other_thread(void *arg)
{
	void *mine = sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE);
	/* The main thread's spare is not handed out here. */
	int same = mine == arg;
	/* Left as this thread's spare: freed when the thread ends. */
	sotls_recbuf_put(SOTLS_RECBUF_TX, mine);
	return (void *)(intptr_t)same;
}

static void test_spares_per_thread(void **state)
{
	(void)state;
	void *a = sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE);
	sotls_recbuf_put(SOTLS_RECBUF_TX, a);
	pthread_t t;
	void *same;
	assert_int_equal(pthread_create(&t, NULL, other_thread, a), 0);
	assert_int_equal(pthread_join(t, &same), 0);
	assert_int_equal((intptr_t)same, 0);
	assert_ptr_equal(sotls_recbuf_get(SOTLS_RECBUF_TX, SIZE), a);
	sotls_recbuf_put(SOTLS_RECBUF_TX, a);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	assert_null(sotls_recbuf_get(SOTLS_RECBUF_KINDS, SIZE));
	assert_null(sotls_recbuf_get(SOTLS_RECBUF_TX, 0));
	assert_null(sotls_recbuf_get(SOTLS_RECBUF_TX, 100)); /* not a multiple of 64 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spare_reused),
		cmocka_unit_test(test_spares_per_thread),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
