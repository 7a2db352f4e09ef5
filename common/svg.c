// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "common/svg.h"

/*
 * Length of the well-formed UTF-8 sequence at @s (Unicode table 3-7) that
 * is also an XML character, or 0.  Without this, one stray byte of a label
 * would make the whole document unreadable to an XML parser.
 */
static int xml_utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int len, i;

	if (s[0] < 0x80)
		return (s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' ||
			s[0] == '\r') ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;		/* no surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	/* U+FFFE and U+FFFF are not XML characters */
	if (len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return len;
}

void svg_escaped(struct svg *svg, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	int len;

	while (*s) {
		switch (*s) {
		case '&': fputs("&amp;", svg->out); s++; continue;
		case '<': fputs("&lt;", svg->out); s++; continue;
		case '>': fputs("&gt;", svg->out); s++; continue;
		case '"': fputs("&quot;", svg->out); s++; continue;
		case '\'': fputs("&apos;", svg->out); s++; continue;
		}
		len = xml_utf8_len(s);
		if (!len) {
			fputc('?', svg->out);
			s++;
			continue;
		}
		fwrite(s, 1, len, svg->out);
		s += len;
	}
}

static void attr(struct svg *svg, const char *name, const char *value)
{
	if (!value)
		return;
	fprintf(svg->out, " %s=\"", name);
	svg_escaped(svg, value);
	fputc('"', svg->out);
}

void svg_begin(struct svg *svg, FILE *out, double width, double height)
{
	memset(svg, 0, sizeof(*svg));
	svg->out = out;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
		width, height, width, height);
}

int svg_end(struct svg *svg)
{
	fputs("</svg>\n", svg->out);
	if (fflush(svg->out) || ferror(svg->out))
		return -EIO;
	return 0;
}

void svg_style(struct svg *svg, const char *css)
{
	fputs("<style>", svg->out);
	svg_escaped(svg, css);
	fputs("</style>\n", svg->out);
}

void svg_defs_begin(struct svg *svg)
{
	fputs("<defs>\n", svg->out);
}

void svg_defs_end(struct svg *svg)
{
	fputs("</defs>\n", svg->out);
}

void svg_hatch_pattern(struct svg *svg, const char *id, double spacing,
		       const char *colour, const char *halo, double opacity)
{
	fputs("<pattern", svg->out);
	attr(svg, "id", id);
	fprintf(svg->out, " patternUnits=\"userSpaceOnUse\" width=\"%.2f\" height=\"%.2f\" "
		"patternTransform=\"rotate(45)\">", spacing, spacing);
	fprintf(svg->out, "<rect x=\"0\" y=\"0\" width=\"%.2f\" height=\"%.2f\"",
		spacing / 4, spacing);
	attr(svg, "fill", colour);
	fprintf(svg->out, " fill-opacity=\"%.2f\"/>", opacity);
	if (halo) {
		fprintf(svg->out, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%.2f\"",
			spacing / 4, spacing / 6, spacing);
		attr(svg, "fill", halo);
		fprintf(svg->out, " fill-opacity=\"%.2f\"/>", opacity);
	}
	fputs("</pattern>\n", svg->out);
}

void svg_linear_gradient(struct svg *svg, const char *id, const char *from,
			 const char *to)
{
	fputs("<linearGradient", svg->out);
	attr(svg, "id", id);
	fputs("><stop offset=\"0\"", svg->out);
	attr(svg, "stop-color", from);
	fputs("/><stop offset=\"1\"", svg->out);
	attr(svg, "stop-color", to);
	fputs("/></linearGradient>\n", svg->out);
}

void svg_rect(struct svg *svg, const char *cls, double x, double y,
	      double width, double height, const char *fill)
{
	fputs("<rect", svg->out);
	attr(svg, "class", cls);
	fprintf(svg->out, " x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"",
		x, y, width, height);
	attr(svg, "fill", fill);
	fputs("/>\n", svg->out);
}

void svg_rect_stroked(struct svg *svg, double x, double y, double width,
		      double height, const char *fill, const char *stroke)
{
	fprintf(svg->out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"",
		x, y, width, height);
	attr(svg, "fill", fill);
	attr(svg, "stroke", stroke);
	fputs("/>\n", svg->out);
}

void svg_text(struct svg *svg, const char *cls, double x, double y,
	      const char *text)
{
	fputs("<text", svg->out);
	attr(svg, "class", cls);
	fprintf(svg->out, " x=\"%.2f\" y=\"%.2f\">", x, y);
	svg_escaped(svg, text);
	fputs("</text>\n", svg->out);
}

/* Ends an element @name opened with its attributes: a tooltip is its <title> */
static void element_end(struct svg *svg, const char *name, const char *tooltip)
{
	if (!tooltip) {
		fputs("/>\n", svg->out);
		return;
	}
	fputs("><title>", svg->out);
	svg_escaped(svg, tooltip);
	fprintf(svg->out, "</title></%s>\n", name);
}

/* The points="x,y x,y ..." attribute of @n points */
static void points(struct svg *svg, const double *xy, int n)
{
	int i;

	fputs(" points=\"", svg->out);
	for (i = 0; i < n; i++)
		fprintf(svg->out, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	fputc('"', svg->out);
}

void svg_polygon(struct svg *svg, const char *cls, const char *fill,
		 const double *xy, int n)
{
	fputs("<polygon", svg->out);
	attr(svg, "class", cls);
	attr(svg, "fill", fill);
	points(svg, xy, n);
	fputs("/>\n", svg->out);
}

void svg_polyline(struct svg *svg, const char *cls, const char *stroke,
		  const char *dash, const double *xy, int n, const char *tooltip)
{
	fputs("<polyline", svg->out);
	attr(svg, "class", cls);
	fputs(" fill=\"none\"", svg->out);
	attr(svg, "stroke", stroke);
	attr(svg, "stroke-dasharray", dash);
	points(svg, xy, n);
	element_end(svg, "polyline", tooltip);
}

void svg_group_begin(struct svg *svg, const char *cls, double dx, double dy)
{
	fputs("<g", svg->out);
	attr(svg, "class", cls);
	fprintf(svg->out, " transform=\"translate(%.2f %.2f)\">\n", dx, dy);
}

void svg_group_end(struct svg *svg)
{
	fputs("</g>\n", svg->out);
}

void svg_shape_begin(struct svg *svg, const char *cls, const char *fill)
{
	fputs("<path", svg->out);
	attr(svg, "class", cls);
	attr(svg, "fill", fill);
	svg->in_shape = true;
	svg->shape_has_path = false;
}

void svg_shape_attr(struct svg *svg, const char *name, const char *value)
{
	/* attributes must all come before the path data */
	if (svg->in_shape && !svg->shape_has_path)
		attr(svg, name, value);
}

void svg_shape_rect(struct svg *svg, double x, double y, double width,
		    double height)
{
	if (!svg->in_shape)
		return;
	fputs(svg->shape_has_path ? " " : " d=\"", svg->out);
	svg->shape_has_path = true;
	fprintf(svg->out, "M%.2f %.2fh%.2fv%.2fh%.2fz", x, y, width, height, -width);
}

void svg_shape_end(struct svg *svg, const char *tooltip)
{
	if (!svg->in_shape)
		return;
	fputs(svg->shape_has_path ? "\"" : " d=\"\"", svg->out);
	svg->in_shape = false;
	element_end(svg, "path", tooltip);
}
