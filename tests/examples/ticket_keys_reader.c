/*
 * ticket-keys-reader FILE STOPFILE: reads FILE with sotls_ticket_key_file_read
 * over and over, as a server re-reading its key file would, until STOPFILE
 * exists; then prints "reads R changes C failures F" (C: how often the newest
 * key's name differed from the read before) and exits 1 if any read failed.
 * ticket_keys.py runs it while sotls-ticket-keys rotates FILE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sotls.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ticket-keys-reader FILE STOPFILE\n");
		return 2;
	}
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX];
	uint8_t last[sizeof(keys[0].name)] = {0};
	unsigned long reads = 0, changes = 0, failures = 0;
	while (access(argv[2], F_OK) != 0) {
		size_t n;
		int rc = sotls_ticket_key_file_read(argv[1], keys, SOTLS_TICKET_KEYS_MAX, &n);
		reads++;
		if (rc != 0) {
			if (failures++ < 5)
				fprintf(stderr, "%s: %s (%s)\n", argv[1], sotls_strerror(rc),
					strerror(errno));
			continue;
		}
		if (reads > 1 && memcmp(last, keys[0].name, sizeof(last)) != 0)
			changes++;
		memcpy(last, keys[0].name, sizeof(last));
	}
	explicit_bzero(keys, sizeof(keys));
	printf("reads %lu changes %lu failures %lu\n", reads, changes, failures);
	return failures == 0 ? 0 : 1;
}
