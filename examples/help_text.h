/*
 * The example programs' --help, laid out as a manual page: section names
 * at the margin (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS,
 * EXAMPLES, ...), their text indented and filled to 79 columns, each
 * option with its meaning in a column of its own. One layout for every
 * program, and for the flags several of them share (server_setup.h,
 * server_limits.c, server_resume.c).
 */
#ifndef SOTLS_EXAMPLES_HELP_TEXT_H
#define SOTLS_EXAMPLES_HELP_TEXT_H

#include <stdio.h>

/* A section's name; a blank line before every one but NAME. */
void help_section(FILE *f, const char *name);

/* Text filled to the page at the section's indent; "\n" ends a paragraph,
 * "\n\n" leaves a blank line after it. */
void help_text(FILE *f, const char *text);

/* Lines printed as they are (commands), each at the section's indent;
 * lines separated by "\n". */
void help_lines(FILE *f, const char *lines);

/* One form of the command: program, then args filled after it (a
 * bracketed group is never split). */
void help_synopsis(FILE *f, const char *program, const char *args);

/* An option ("--port N") and its meaning, filled in the meaning's column:
 * on the option's line when the option fits before it, else below. */
void help_option(FILE *f, const char *option, const char *meaning);

#endif
