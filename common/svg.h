/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small SVG writer: a document, its style and a few definitions
 * (hatching, gradients), rectangles, text, and "shapes" made of several
 * rectangles that act as one element with one tooltip.  Every string is
 * escaped here, so any text (a label, a path) gives well-formed XML.
 * Coordinates are printed with two decimals, independent of the locale.
 */
#ifndef BTRFS_SPACE_COMMON_SVG_H
#define BTRFS_SPACE_COMMON_SVG_H

#include <stdbool.h>
#include <stdio.h>

struct svg {
	FILE *out;
	bool in_shape;		/* between svg_shape_begin() and svg_shape_end() */
	bool shape_has_path;	/* the shape's d="..." is open */
};

void svg_begin(struct svg *svg, FILE *out, double width, double height);
/* Close the document; 0, or -EIO if any write failed */
int svg_end(struct svg *svg);

/* @text as XML character data or attribute value */
void svg_escaped(struct svg *svg, const char *text);

void svg_style(struct svg *svg, const char *css);
void svg_defs_begin(struct svg *svg);
void svg_defs_end(struct svg *svg);
/*
 * Diagonal lines @spacing apart, of @colour and @opacity, as fill
 * "url(#id)"; a thinner line of @halo (may be NULL) beside each keeps them
 * visible on fills as dark as @colour.
 */
void svg_hatch_pattern(struct svg *svg, const char *id, double spacing,
		       const char *colour, const char *halo, double opacity);
/* Left to right from @from to @to, as fill "url(#id)" */
void svg_linear_gradient(struct svg *svg, const char *id, const char *from,
			 const char *to);

/* @cls, @fill may be NULL */
void svg_rect(struct svg *svg, const char *cls, double x, double y,
	      double width, double height, const char *fill);
void svg_rect_stroked(struct svg *svg, double x, double y, double width,
		      double height, const char *fill, const char *stroke);
void svg_text(struct svg *svg, const char *cls, double x, double y,
	      const char *text);

/* A closed polygon through @n points (x0, y0, x1, y1, ...); @cls may be NULL */
void svg_polygon(struct svg *svg, const char *cls, const char *fill,
		 const double *xy, int n);

/*
 * An open line through @n points, of @stroke, dashed by @dash (may be
 * NULL: solid); @tooltip (may be NULL) as its <title>
 */
void svg_polyline(struct svg *svg, const char *cls, const char *stroke,
		  const char *dash, const double *xy, int n, const char *tooltip);

void svg_group_begin(struct svg *svg, const char *cls, double dx, double dy);
void svg_group_end(struct svg *svg);

/*
 * One element drawn as the union of rectangles:
 *   svg_shape_begin(); svg_shape_attr()...; svg_shape_rect()...;
 *   svg_shape_end(tooltip)
 * A shape without rectangles is still written (with an empty path), so
 * that callers counting elements find every one.
 */
void svg_shape_begin(struct svg *svg, const char *cls, const char *fill);
void svg_shape_attr(struct svg *svg, const char *name, const char *value);
void svg_shape_rect(struct svg *svg, double x, double y, double width,
		    double height);
/* @tooltip (may be NULL): a <title>, shown on hover; lines split on '\n' */
void svg_shape_end(struct svg *svg, const char *tooltip);

#endif
