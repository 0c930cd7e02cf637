/*
 * sotls-ticket-keys: makes and rotates the ticket key file a fleet of sotls
 * servers shares (sotls_config_set_ticket_key_file), through the public key
 * file API alone.
 *
 * The schedule: a cron job runs `rotate` every period. Each run adds a key
 * that issues from now + --delay (the delay gives every server time to get
 * the new file and so to open the new key's tickets before any server
 * issues one), and ends each key that had no end at the new key's intro +
 * --lifetime: the key issues until the new one comes in, and its last
 * tickets still open for a ticket lifetime after that. Expired keys go.
 * `new` writes the file that schedule would have left behind, so the first
 * rotation looks like every later one.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "help_text.h"
#include "parse_number.h"
#include "sotls.h"

#define PROG "sotls-ticket-keys"

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Bounds on the numbers the options take, far beyond any real schedule,
 * so that now + delay + lifetime never overflows. */
#define SECONDS_MAX 10000000000LL /* about 317 years */
#define NOW_MAX 100000000000LL

/* The command forms: the usage line after an error, and --help's SYNOPSIS. */
static const char *const FORMS[] = {
	"new FILE [--keys N] [--period S] [--lifetime S] [--force]",
	"rotate FILE [--delay S] [--lifetime S] [--keep N]",
	"show FILE",
};
#define N_FORMS (sizeof(FORMS) / sizeof(FORMS[0]))

/* After a usage error: the forms, and where the rest is. */
static int usage_error(void)
{
	for (size_t i = 0; i < N_FORMS; i++)
		fprintf(stderr, "%s" PROG " %s\n", i == 0 ? "usage: " : "       ", FORMS[i]);
	fprintf(stderr, "Every command also takes --now T. (" PROG " --help says more)\n");
	return EXIT_USAGE;
}

/* --help, laid out as a manual page. */
static void usage(FILE *f)
{
	help_section(f, "NAME");
	help_text(f, PROG " - make, rotate and show the session ticket key file that a fleet of "
			  "sotls servers shares");
	help_section(f, "SYNOPSIS");
	for (size_t i = 0; i < N_FORMS; i++) {
		char form[160];
		snprintf(form, sizeof(form), "%s [--now T]", FORMS[i]);
		help_synopsis(f, PROG, form);
	}
	help_section(f, "DESCRIPTION");
	help_text(f, "Servers read FILE with sotls_config_set_ticket_key_file (the example "
		     "servers' --ticket-key-file) and again whenever it changes, so a cron job that "
		     "rotates FILE rotates the fleet. Each key issues tickets from its intro and "
		     "opens them until its expiry.");
	help_section(f, "COMMANDS");
	help_option(f, "new",
		    "writes N fresh random keys as if `rotate` had run every period: the newest "
		    "issues from now, each older one came in a period earlier and opens tickets "
		    "until a lifetime after the next one came in. Refuses to replace FILE unless "
		    "--force.");
	help_option(f, "rotate",
		    "adds a key that issues from now + the delay, ends each key without an end at "
		    "the new key's start + the lifetime, drops expired keys and keeps at most "
		    "--keep keys (the oldest go first, never the key that issues now or one still "
		    "to come). Run it from cron once a period.");
	help_option(f, "show",
		    "lists the keys, newest first: name, intro and expiry (UTC) and a state: "
		    "issues (new tickets are sealed with it now), opens (it only opens tickets), "
		    "pending (it opens tickets, and issues from its intro on) or expired. Never "
		    "prints a secret.");
	help_section(f, "OPTIONS");
	char keys[64];
	snprintf(keys, sizeof(keys), "new: keys to write (default 2, at most %d)",
		 SOTLS_TICKET_KEYS_MAX);
	help_option(f, "--keys N", keys);
	help_option(f, "--period S", "new: seconds between the keys' intros (default 43200)");
	help_option(f, "--lifetime S",
		    "how long a key opens tickets after the next one comes in (default 7200; at "
		    "least the servers' ticket lifetime)");
	help_option(f, "--delay S",
		    "rotate: seconds until the new key issues (default 0; give the time FILE takes "
		    "to reach every server)");
	help_option(f, "--keep N", "rotate: keys kept at most (default 4)");
	help_option(f, "--force", "new: replace an existing FILE (its tickets stop opening)");
	help_option(f, "--now T", "act as if it were T (Unix seconds), to plan a schedule");
	help_option(f, "--help", "this text");
	help_section(f, "FILES");
	help_text(f, "FILE is replaced atomically (a new file beside it, mode 0600, synced, renamed "
		     "over it). Servers take it only as a regular file, not a link, owned by their "
		     "user or root and readable by no one else.");
	help_section(f, "EXIT STATUS");
	help_text(f, "0 done; 1 failed (the file, what and why on stderr), or for show, no key "
		     "issues now; 2 usage.");
	help_section(f, "EXAMPLES");
	help_lines(f, PROG " new /etc/sotls/tickets --period 43200 --lifetime 7200\n"
			  "# crontab: every 12 hours, a new key that issues 10 minutes later\n"
			  "0 */12 * * *  " PROG " rotate /etc/sotls/tickets --delay 600");
}

/* ---- options ---- */

enum opt { OPT_KEYS, OPT_PERIOD, OPT_LIFETIME, OPT_DELAY, OPT_KEEP, OPT_NOW, OPT_FORCE,
	   OPT_HELP, OPT_COUNT };

struct opts {
	int64_t value[OPT_COUNT];
	bool given[OPT_COUNT];
};

struct command {
	const char *name;
	int (*run)(const char *file, const struct opts *o);
	unsigned allowed; /* bits 1 << enum opt */
};

/* ---- keys ---- */

static int fill_random(uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t r = getrandom(p, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int random_key(struct sotls_ticket_key *k)
{
	return fill_random(k->name, sizeof(k->name)) == 0 &&
			       fill_random(k->secret, sizeof(k->secret)) == 0
		       ? 0
		       : -1;
}

static bool expired(const struct sotls_ticket_key *k, int64_t now)
{
	return k->expiry != 0 && k->expiry <= now;
}

/* The key servers issue with at now, as sotls picks it: the latest intro
 * among the keys that have come in and not expired, the first one on a tie;
 * -1 if none. */
static ptrdiff_t issuing_key(const struct sotls_ticket_key *keys, size_t n, int64_t now)
{
	ptrdiff_t best = -1;
	for (size_t i = 0; keys != NULL && i < n; i++)
		if (keys[i].intro <= now && !expired(&keys[i], now) &&
		    (best < 0 || keys[i].intro > keys[best].intro))
			best = (ptrdiff_t)i;
	return best;
}

static const char *name_hex(const struct sotls_ticket_key *k, char out[33])
{
	for (size_t i = 0; i < sizeof(k->name); i++)
		snprintf(out + 2 * i, 3, "%02x", k->name[i]);
	return out;
}

/* t as UTC ISO 8601 ("2025-01-31T12:00:00Z"); the plain number if it has
 * no calendar form. */
static const char *utc(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (gmtime_r(&tt, &tm) == NULL || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "%" PRId64, t);
	return out;
}

/* ---- file errors ---- */

static int fail(const char *file, const char *what, int rc)
{
	int e = errno;
	fprintf(stderr, PROG ": %s: %s: %s", file, what, sotls_strerror(rc));
	if (rc == SOTLS_ERR_SYSCALL || rc == SOTLS_ERR_TICKET_KEYS)
		fprintf(stderr, ": %s", strerror(e));
	/* EPERM: the library refused the file's mode; show it. */
	struct stat st;
	if (rc == SOTLS_ERR_TICKET_KEYS && e == EPERM && stat(file, &st) == 0)
		fprintf(stderr, " (its mode is %04o: chmod 600 %s)", (unsigned)(st.st_mode & 07777),
			file);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

static int write_keys(const char *file, const struct sotls_ticket_key *keys, size_t n)
{
	int rc = sotls_ticket_key_file_write(file, keys, n);
	return rc == 0 ? EXIT_OK : fail(file, "cannot write the keys", rc);
}

/* ---- commands ---- */

static int cmd_new(const char *file, const struct opts *o)
{
	int64_t now = o->value[OPT_NOW], period = o->value[OPT_PERIOD];
	int64_t lifetime = o->value[OPT_LIFETIME], n = o->value[OPT_KEYS];
	/* Key i (0 newest) came in i periods ago and opens until a lifetime
	 * after key i - 1 came in: it must not have expired already, nor have
	 * come in before 1970. */
	if (n >= 2 && (n - 2) * period >= lifetime) {
		fprintf(stderr,
			PROG ": --keys %" PRId64 ": with --period %" PRId64 " and --lifetime %" PRId64
			     " the oldest keys would have expired; at most %" PRId64 "\n",
			n, period, lifetime, (lifetime + period - 1) / period + 1);
		return EXIT_USAGE;
	}
	if ((n - 1) * period > now) {
		fprintf(stderr, PROG ": --keys %" PRId64 " --period %" PRId64
				     ": the oldest key would come in before 1970\n",
			n, period);
		return EXIT_USAGE;
	}
	struct stat st;
	if (!o->given[OPT_FORCE]) {
		if (lstat(file, &st) == 0) {
			fprintf(stderr,
				PROG ": %s: exists; not replaced (--force replaces it, and the "
				     "tickets of its keys stop opening wherever the new file goes)\n",
				file);
			return EXIT_FAIL;
		}
		if (errno != ENOENT)
			return fail(file, "cannot check it", SOTLS_ERR_SYSCALL);
	}

	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX];
	int status = EXIT_OK;
	for (int64_t i = 0; i < n && status == EXIT_OK; i++) {
		if (random_key(&keys[i]) != 0) {
			fprintf(stderr, PROG ": getrandom: %s\n", strerror(errno));
			status = EXIT_FAIL;
		}
		keys[i].intro = now - i * period;
		keys[i].expiry = i == 0 ? 0 : keys[i - 1].intro + lifetime;
	}
	if (status == EXIT_OK)
		status = write_keys(file, keys, (size_t)n);
	explicit_bzero(keys, sizeof(keys));
	return status;
}

/* Whether rotate may drop keys[i] to keep fewer keys. */
static bool droppable(const struct sotls_ticket_key *keys, size_t n, size_t i, int64_t now)
{
	return i != 0 && keys[i].intro <= now && (ptrdiff_t)i != issuing_key(keys, n, now);
}

/* Drops the oldest droppable keys (the last ones) until at most keep are
 * left, saying which: each still opened tickets. */
static size_t trim(const char *file, struct sotls_ticket_key *keys, size_t n, size_t keep,
		   int64_t now)
{
	for (size_t i = n; i-- > 0 && n > keep;) {
		if (!droppable(keys, n, i, now))
			continue;
		char name[33], until[32];
		fprintf(stderr, PROG ": %s: dropped key %s, which still opened tickets until %s, "
				     "to keep %zu keys\n",
			file, name_hex(&keys[i], name), utc(keys[i].expiry, until), keep);
		memmove(&keys[i], &keys[i + 1], (n - i - 1) * sizeof(*keys));
		explicit_bzero(&keys[n - 1], sizeof(*keys));
		n--;
	}
	return n;
}

/* The rotation itself on keys[1 .. n) as read, keys[0] the new key. */
static int rotate_keys(const char *file, struct sotls_ticket_key *keys, size_t *n,
		       const struct opts *o)
{
	int64_t now = o->value[OPT_NOW];
	struct sotls_ticket_key *fresh = &keys[0];
	fresh->intro = now + o->value[OPT_DELAY];
	fresh->expiry = 0;
	size_t kept = 1;
	for (size_t i = 1; i < *n; i++) {
		struct sotls_ticket_key *k = &keys[i];
		if (expired(k, now))
			continue;
		/* A key still to come after the new one would take over from it. */
		if (k->intro > fresh->intro) {
			char name[33], at[32];
			fprintf(stderr,
				PROG ": %s: key %s comes in at %s, after the new key would; "
				     "rotate with --delay %" PRId64 " or more\n",
				file, name_hex(k, name), utc(k->intro, at), k->intro - now);
			return EXIT_FAIL;
		}
		if (k->expiry == 0)
			k->expiry = fresh->intro + o->value[OPT_LIFETIME];
		keys[kept++] = *k;
	}
	for (size_t i = kept; i < *n; i++)
		explicit_bzero(&keys[i], sizeof(keys[i]));
	*n = trim(file, keys, kept, (size_t)o->value[OPT_KEEP], now);
	if (*n > SOTLS_TICKET_KEYS_MAX) {
		fprintf(stderr, PROG ": %s: %zu keys still to come or issuing; a file holds at most %d\n",
			file, *n, SOTLS_TICKET_KEYS_MAX);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int cmd_rotate(const char *file, const struct opts *o)
{
	/* keys[0] is for the new key; the file's keys follow it. */
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX + 1];
	size_t n;
	int rc = sotls_ticket_key_file_read(file, keys + 1, SOTLS_TICKET_KEYS_MAX, &n);
	if (rc != 0)
		return fail(file, "cannot read the keys", rc);
	n++;
	int status = EXIT_OK;
	if (random_key(&keys[0]) != 0) {
		fprintf(stderr, PROG ": getrandom: %s\n", strerror(errno));
		status = EXIT_FAIL;
	}
	if (status == EXIT_OK)
		status = rotate_keys(file, keys, &n, o);
	if (status == EXIT_OK)
		status = write_keys(file, keys, n);
	explicit_bzero(keys, sizeof(keys));
	return status;
}

static int cmd_show(const char *file, const struct opts *o)
{
	struct sotls_ticket_key keys[SOTLS_TICKET_KEYS_MAX];
	size_t n;
	int rc = sotls_ticket_key_file_read(file, keys, SOTLS_TICKET_KEYS_MAX, &n);
	if (rc != 0)
		return fail(file, "cannot read the keys", rc);
	int64_t now = o->value[OPT_NOW];
	ptrdiff_t issuing = issuing_key(keys, n, now);
	char at[32], name[33], intro[32], expiry[32];
	printf("now %s\n%-32s  %-20s  %-20s  %s\n", utc(now, at), "name", "intro", "expiry",
	       "state");
	for (size_t i = 0; i < n; i++) {
		const struct sotls_ticket_key *k = &keys[i];
		const char *state = (ptrdiff_t)i == issuing ? "issues"
				    : expired(k, now)	    ? "expired"
				    : k->intro > now	    ? "pending"
							    : "opens";
		printf("%-32s  %-20s  %-20s  %s\n", name_hex(k, name), utc(k->intro, intro),
		       k->expiry == 0 ? "never" : utc(k->expiry, expiry), state);
	}
	explicit_bzero(keys, sizeof(keys));
	if (issuing < 0) {
		fprintf(stderr, PROG ": %s: no key issues tickets now\n", file);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

#define BIT(o) (1u << (o))

static const struct command COMMANDS[] = {
	{"new", cmd_new,
	 BIT(OPT_KEYS) | BIT(OPT_PERIOD) | BIT(OPT_LIFETIME) | BIT(OPT_FORCE) | BIT(OPT_NOW)},
	{"rotate", cmd_rotate, BIT(OPT_DELAY) | BIT(OPT_LIFETIME) | BIT(OPT_KEEP) | BIT(OPT_NOW)},
	{"show", cmd_show, BIT(OPT_NOW)},
};

static const struct option LONG_OPTS[] = {
	{"keys", required_argument, NULL, OPT_KEYS},
	{"period", required_argument, NULL, OPT_PERIOD},
	{"lifetime", required_argument, NULL, OPT_LIFETIME},
	{"delay", required_argument, NULL, OPT_DELAY},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"now", required_argument, NULL, OPT_NOW},
	{"force", no_argument, NULL, OPT_FORCE},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

/* Each numeric option's range. */
static const struct {
	int64_t lo, hi;
} RANGE[OPT_COUNT] = {
	[OPT_KEYS] = {1, SOTLS_TICKET_KEYS_MAX},
	[OPT_PERIOD] = {1, SECONDS_MAX},
	[OPT_LIFETIME] = {1, SECONDS_MAX},
	[OPT_DELAY] = {0, SECONDS_MAX},
	[OPT_KEEP] = {1, SOTLS_TICKET_KEYS_MAX},
	[OPT_NOW] = {0, NOW_MAX},
};

/* Options into o; the index of the first argument left, or -1 (said why). */
static int parse_opts(int argc, char **argv, const struct command *cmd, struct opts *o)
{
	o->value[OPT_KEYS] = 2;
	o->value[OPT_PERIOD] = 43200;
	o->value[OPT_LIFETIME] = 7200;
	o->value[OPT_DELAY] = 0;
	o->value[OPT_KEEP] = 4;
	o->value[OPT_NOW] = (int64_t)time(NULL);
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", LONG_OPTS, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(stdout);
			exit(EXIT_OK);
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, PROG ": %s: %s\n", argv[optind - 1],
				c == ':' ? "needs a value" : "unknown option");
			return -1;
		}
		if (!(cmd->allowed & BIT(c))) {
			fprintf(stderr, PROG " %s: --%s does not apply\n", cmd->name,
				LONG_OPTS[c].name);
			return -1;
		}
		o->given[c] = true;
		long long v = 0;
		if (c != OPT_FORCE && !parse_number(optarg, RANGE[c].lo, RANGE[c].hi, &v)) {
			fprintf(stderr, PROG ": --%s %s: not a number from %" PRId64 " to %" PRId64 "\n",
				LONG_OPTS[c].name, optarg, RANGE[c].lo, RANGE[c].hi);
			return -1;
		}
		o->value[c] = v;
	}
	return optind;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; argc >= 2 && i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
		if (strcmp(argv[1], COMMANDS[i].name) == 0)
			cmd = &COMMANDS[i];
	if (cmd == NULL) {
		if (argc >= 2)
			fprintf(stderr, PROG ": %s: unknown command\n", argv[1]);
		else
			fprintf(stderr, PROG ": no command\n");
		return usage_error();
	}
	struct opts o = {0};
	int first = parse_opts(argc - 1, argv + 1, cmd, &o);
	if (first < 0 || first != argc - 2) {
		if (first >= 0)
			fprintf(stderr, PROG " %s: %s\n", cmd->name,
				first == argc - 1 ? "FILE missing" : "one FILE only");
		return usage_error();
	}
	return cmd->run(argv[first + 1], &o);
}
