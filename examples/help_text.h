/* The example servers' --help layout, shared by the files that print
 * options for them (server_limits.c, server_resume.c). */
#ifndef SOTLS_EXAMPLES_HELP_TEXT_H
#define SOTLS_EXAMPLES_HELP_TEXT_H

/* Where an option's description starts when it goes on another line. */
#define HELP_INDENT "                    "

#endif
