#include "vm_check.h"

#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int check_passed, check_failed;

void check(int ok, const char *fmt, ...)
{
	va_list ap;
	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		check_passed++;
	else
		check_failed++;
}

void vm_tcp_pair(int *a, int *b)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&addr, &len) != 0) {
		perror("listen on loopback");
		exit(2);
	}
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		perror("connect on loopback");
		exit(2);
	}
	*b = accept(l, NULL, NULL);
	if (*b < 0) {
		perror("accept");
		exit(2);
	}
	close(l);
}
