#include "help_text.h"

#include <string.h>

#define WIDTH 79
#define INDENT 7	  /* a section's text */
#define MEANING (INDENT + 18) /* an option's meaning */

static void spaces(FILE *f, int n)
{
	fprintf(f, "%*s", n, "");
}

/* The words of s[0 .. len) from column *col on, a new line at indent when
 * the next word would pass the page's width. */
static void fill(FILE *f, int *col, int indent, const char *s, size_t len)
{
	const char *end = s + len;
	while (s < end) {
		while (s < end && *s == ' ')
			s++;
		/* A synopsis' "[--cert FILE --key FILE]" is one word. */
		const char *w = s;
		int depth = 0;
		for (; s < end && (*s != ' ' || depth > 0); s++)
			depth += (*s == '[') - (*s == ']');
		int n = (int)(s - w);
		if (n == 0)
			break;
		if (*col > indent && *col + 1 + n > WIDTH) {
			fputc('\n', f);
			spaces(f, indent);
			*col = indent;
		} else if (*col > indent) {
			fputc(' ', f);
			++*col;
		}
		fwrite(w, 1, (size_t)n, f);
		*col += n;
	}
}

/* Each "\n"-separated paragraph of text filled from column indent, the first
 * one from *col (already there). */
static void paragraphs(FILE *f, int col, int indent, const char *text)
{
	for (;;) {
		const char *nl = strchr(text, '\n');
		size_t len = nl != NULL ? (size_t)(nl - text) : strlen(text);
		fill(f, &col, indent, text, len);
		fputc('\n', f);
		if (nl == NULL || nl[1] == '\0')
			return;
		text = nl + 1;
		if (*text == '\n') { /* a blank line */
			fputc('\n', f);
			text++;
		}
		spaces(f, indent);
		col = indent;
	}
}

void help_section(FILE *f, const char *name)
{
	fprintf(f, "%s%s\n", strcmp(name, "NAME") == 0 ? "" : "\n", name);
}

void help_text(FILE *f, const char *text)
{
	spaces(f, INDENT);
	paragraphs(f, INDENT, INDENT, text);
}

void help_lines(FILE *f, const char *lines)
{
	for (const char *p = lines; *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		spaces(f, INDENT);
		fwrite(p, 1, len, f);
		fputc('\n', f);
		p += len + (nl != NULL);
	}
}

void help_synopsis(FILE *f, const char *program, const char *args)
{
	spaces(f, INDENT);
	int col = INDENT + fprintf(f, "%s ", program);
	paragraphs(f, col, col, args);
}

void help_option(FILE *f, const char *option, const char *meaning)
{
	spaces(f, INDENT);
	int col = INDENT + fprintf(f, "%s", option);
	if (col + 1 > MEANING) {
		fputc('\n', f);
		col = 0;
	}
	spaces(f, MEANING - col);
	paragraphs(f, MEANING, MEANING, meaning);
}
