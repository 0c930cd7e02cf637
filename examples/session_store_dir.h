/* A session store for sotls_config_set_session_store (the example of the
 * external cache): one file per session in a directory, so that every
 * server process on the machine that is given the same directory resumes
 * the sessions of the others.
 *
 * Each file is named by the session ID in lowercase hex and holds a magic
 * string, the expiry (Unix seconds, big-endian) and sotls's bytes; it is
 * written through a temporary file and a rename, mode 0600 (secret_file.h).
 * get refuses and removes a file past its expiry (or one that is not a
 * session); files of sessions nobody asks for again stay until something
 * removes them (a cron job: find DIR -type f -mmin +MINUTES -delete). The
 * calls block on the file system: a local directory (tmpfs for speed),
 * not a network one. */
#ifndef SOTLS_EXAMPLES_SESSION_STORE_DIR_H
#define SOTLS_EXAMPLES_SESSION_STORE_DIR_H

#include "sotls.h"

struct session_store_dir {
	int dirfd;
};

/* session_store_dir_open's result for a directory that is not the user's
 * own, or that group or others may enter: another user could read the
 * sessions' secrets, or plant a session of a master secret of their own. */
#define SESSION_STORE_BAD_MODE (-2)

/* Opens the directory path into *s. Returns 0, SESSION_STORE_BAD_MODE, or
 * -1 with errno. */
int session_store_dir_open(struct session_store_dir *s, const char *path);

/* Makes cfg (a server configuration) keep its sessions in s, which must
 * outlive it. Returns sotls_config_set_session_store's result. */
int session_store_dir_use(struct sotls_config *cfg, struct session_store_dir *s);

#endif
