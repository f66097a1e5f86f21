/* Reference images for tests/envs/test_pygame_draw.cpp, drawn by pygame 2.6.1's own C drawing
 * routines (src_c/draw.c) on a 32-bit XRGB8888 SDL surface, the format of gym_pusht's
 * pygame.Surface((512, 512)).
 *
 * pygame's drawing code is not copied here: it is cut out of a pygame checkout at build time
 * (its static helpers from `swap` to the method table, plus the forward declarations) and
 * #included below, after a small shim for the few Python C-API names it uses. The Python-level
 * wrappers of draw.c (argument parsing, the early returns) are restated in ref_* below.
 *
 * How it was run (Debian 12, libsdl2-dev 2.26.5, gcc 12, x86-64):
 *   git -C pygame show 2.6.1:src_c/draw.c | awk '
 *     /^\/\* Declaration of drawing algorithms/ {p = 1}
 *     /^\/\/ validation of a draw color/ {p = 0}
 *     /^swap\(float \*a/ {q = 1; print "static void"}
 *     /^static PyMethodDef/ {q = 0}
 *     p || q' > /tmp/pg_draw_261_helpers.c
 *   gcc -O2 -std=c99 -I/tmp $(sdl2-config --cflags) scripts/pusht_reference/pygame_draw_reference.c \
 *     $(sdl2-config --libs) -lm -o /tmp/pygame_draw_reference
 *   /tmp/pygame_draw_reference tests/envs/data
 * (pygame = a clone of https://github.com/pygame/pygame.) Compiled with -DPG_REF_NO_MAIN the same
 * file is a library of ref_* functions, which is how the port was compared against pygame over
 * many random primitives.
 *
 * Each output file, tests/envs/data/pygame_draw_<scene>.bin, is a text header listing the draw
 * calls, one a line, then the raw RGB pixels (HWC, uint8):
 *   pygame_draw 1
 *   size W H
 *   fill R G B
 *   polygon R G B N x1 y1 ... xN yN          pygame.draw.polygon(surf, c, points)
 *   circle R G B X Y RADIUS                 pygame.draw.circle(surf, c, (X, Y), RADIUS, 0)
 *   lines R G B WIDTH N x1 y1 ... xN yN      pygame.draw.lines(surf, c, False, points, WIDTH)
 *   aalines R G B N x1 y1 ... xN yN          pygame.draw.aalines(surf, c, False, points)
 *   end
 * followed by W * H * 3 bytes.
 */
#include <SDL.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- shim for the Python C-API names used by the helpers --- */
typedef ptrdiff_t Py_ssize_t;
#define PyMem_New(type, n) ((type *)malloc((size_t)(n) * sizeof(type)))
#define PyMem_Free free
#define PyErr_NoMemory() ((void)0)
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "pg_draw_261_helpers.c"

/* --- the Python-level wrappers, as pygame 2.6.1 runs them for these arguments --- */
SDL_Surface *
ref_surface_new(int w, int h)
{
    return SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_XRGB8888);
}

static Uint32
ref_color(SDL_Surface *s, const uint8_t c[3])
{
    return SDL_MapRGBA(s->format, c[0], c[1], c[2], 255);
}

void
ref_fill(SDL_Surface *s, const uint8_t c[3])
{
    SDL_FillRect(s, NULL, ref_color(s, c));
}

/* pygame.draw.polygon(surf, c, points), width 0 */
void
ref_polygon(SDL_Surface *s, const uint8_t c[3], const int *xy, int n)
{
    int drawn[4] = {INT_MAX, INT_MAX, INT_MIN, INT_MIN};
    int *xs, *ys, i;
    if (n < 3)
        return;
    xs = malloc(sizeof(int) * n);
    ys = malloc(sizeof(int) * n);
    for (i = 0; i < n; ++i) {
        xs[i] = xy[2 * i];
        ys[i] = xy[2 * i + 1];
    }
    draw_fillpoly(s, xs, ys, n, ref_color(s, c), drawn);
    free(xs);
    free(ys);
}

/* pygame.draw.circle(surf, c, (x, y), radius, 0) */
void
ref_circle(SDL_Surface *s, const uint8_t c[3], int x, int y, int radius)
{
    int drawn[4] = {INT_MAX, INT_MAX, INT_MIN, INT_MIN};
    if (radius < 1)
        return;
    if (x > s->clip_rect.x + s->clip_rect.w + radius || x < s->clip_rect.x - radius ||
        y > s->clip_rect.y + s->clip_rect.h + radius || y < s->clip_rect.y - radius)
        return;
    draw_circle_filled(s, x, y, radius, ref_color(s, c), drawn);
}

/* pygame.draw.lines(surf, c, False, points, width) */
void
ref_lines(SDL_Surface *s, const uint8_t c[3], const int *xy, int n, int width)
{
    int drawn[4] = {INT_MAX, INT_MAX, INT_MIN, INT_MIN};
    int i;
    if (n < 2 || width < 1)
        return;
    for (i = 1; i < n; ++i)
        draw_line_width(s, ref_color(s, c), xy[2 * i - 2], xy[2 * i - 1], xy[2 * i],
                        xy[2 * i + 1], width, drawn);
}

/* pygame.draw.aalines(surf, c, False, points), blend on; points arrive as Python floats */
void
ref_aalines(SDL_Surface *s, const uint8_t c[3], const double *xy, int n)
{
    int drawn[4] = {INT_MAX, INT_MAX, INT_MIN, INT_MIN};
    int i;
    if (n < 2)
        return;
    for (i = 1; i < n; ++i)
        draw_aaline(s, ref_color(s, c), (float)xy[2 * i - 2], (float)xy[2 * i - 1],
                    (float)xy[2 * i], (float)xy[2 * i + 1], 1, drawn);
}

void
ref_read_rgb(SDL_Surface *s, uint8_t *rgb)
{
    int x, y;
    for (y = 0; y < s->h; ++y)
        for (x = 0; x < s->w; ++x) {
            Uint32 p = ((Uint32 *)((Uint8 *)s->pixels + y * s->pitch))[x];
            SDL_GetRGB(p, s->format, rgb, rgb + 1, rgb + 2);
            rgb += 3;
        }
}

void
ref_write_rgb(SDL_Surface *s, const uint8_t *rgb)
{
    int x, y;
    for (y = 0; y < s->h; ++y)
        for (x = 0; x < s->w; ++x) {
            ((Uint32 *)((Uint8 *)s->pixels + y * s->pitch))[x] =
                SDL_MapRGB(s->format, rgb[0], rgb[1], rgb[2]);
            rgb += 3;
        }
}

#ifndef PG_REF_NO_MAIN
/* --- the scenes: every call is drawn and written to the header --- */
static SDL_Surface *g_surf;
static char g_ops[1 << 20];
static size_t g_len;

static void
emit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_len += (size_t)vsnprintf(g_ops + g_len, sizeof g_ops - g_len, fmt, ap);
    va_end(ap);
}

static void
op_fill(int r, int g, int b)
{
    uint8_t c[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    ref_fill(g_surf, c);
    emit("fill %d %d %d\n", r, g, b);
}

static void
op_polygon(int r, int g, int b, int n, const int *xy)
{
    uint8_t c[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    int i;
    ref_polygon(g_surf, c, xy, n);
    emit("polygon %d %d %d %d", r, g, b, n);
    for (i = 0; i < 2 * n; ++i)
        emit(" %d", xy[i]);
    emit("\n");
}

static void
op_circle(int r, int g, int b, int x, int y, int radius)
{
    uint8_t c[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    ref_circle(g_surf, c, x, y, radius);
    emit("circle %d %d %d %d %d %d\n", r, g, b, x, y, radius);
}

static void
op_lines(int r, int g, int b, int width, int n, const int *xy)
{
    uint8_t c[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    int i;
    ref_lines(g_surf, c, xy, n, width);
    emit("lines %d %d %d %d %d", r, g, b, width, n);
    for (i = 0; i < 2 * n; ++i)
        emit(" %d", xy[i]);
    emit("\n");
}

/* aalines with integer points (as PushT passes them) */
static void
op_aalines(int r, int g, int b, int n, const int *xy)
{
    uint8_t c[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
    double d[64];
    int i;
    for (i = 0; i < 2 * n; ++i)
        d[i] = xy[i];
    ref_aalines(g_surf, c, d, n);
    emit("aalines %d %d %d %d", r, g, b, n);
    for (i = 0; i < 2 * n; ++i)
        emit(" %d", xy[i]);
    emit("\n");
}

static uint32_t g_rng = 12345u;
static int
rnd(int lo, int hi) /* inclusive */
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return lo + (int)((g_rng >> 8) % (uint32_t)(hi - lo + 1));
}

static void
begin(int w, int h)
{
    g_surf = ref_surface_new(w, h);
    g_len = 0;
    emit("pygame_draw 1\nsize %d %d\n", w, h);
}

static void
finish(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    size_t n = (size_t)g_surf->w * g_surf->h * 3;
    uint8_t *rgb = malloc(n);
    emit("end\n");
    ref_read_rgb(g_surf, rgb);
    snprintf(path, sizeof path, "%s/pygame_draw_%s.bin", dir, name);
    f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fwrite(g_ops, 1, g_len, f);
    fwrite(rgb, 1, n, f);
    fclose(f);
    free(rgb);
    SDL_FreeSurface(g_surf);
    printf("wrote %s\n", path);
}

/* A block like PushT's: a rotated rectangle filled (closing point repeated), its edges as width-4
 * lines, caps as 4-point polygons and radius-2 circles. */
static void
pusht_block(int cx, int cy, int hw, int hh, double angle, int r, int g, int b)
{
    double ca = cos(angle), sa = sin(angle);
    int v[10], i;
    double corner[4][2] = {{-hw, -hh}, {hw, -hh}, {hw, hh}, {-hw, hh}};
    for (i = 0; i < 4; ++i) {
        v[2 * i] = (int)lround(cx + ca * corner[i][0] - sa * corner[i][1]);
        v[2 * i + 1] = (int)lround(cy + sa * corner[i][0] + ca * corner[i][1]);
    }
    v[8] = v[0];
    v[9] = v[1];
    op_polygon(r / 2 + 128, g / 2 + 128, b / 2 + 128, 5, v);
    for (i = 0; i < 4; ++i) {
        int seg[4] = {v[2 * i], v[2 * i + 1], v[2 * i + 2], v[2 * i + 3]};
        int dx = abs(seg[3] - seg[1]), dy = abs(seg[2] - seg[0]);
        double len = sqrt((double)dx * dx + (double)dy * dy);
        op_lines(r, g, b, 4, 2, seg);
        if (len > 0) {
            int ox = (int)lround(2 * dx / len), oy = (int)lround(2 * dy / len);
            int quad[8] = {seg[0] - ox, seg[1] + oy, seg[0] + ox, seg[1] - oy,
                           seg[2] + ox, seg[3] - oy, seg[2] - ox, seg[3] + oy};
            op_polygon(r, g, b, 4, quad);
        }
        op_circle(r, g, b, seg[0], seg[1], 2);
        op_circle(r, g, b, seg[2], seg[3], 2);
    }
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    int i, k;

    /* 1. PushT-like: goal and T blocks, agent circle, aalines over other colours. */
    begin(128, 128);
    op_fill(255, 255, 255);
    pusht_block(60, 50, 24, 5, 0.7, 0x77, 0x88, 0x99);
    pusht_block(62, 70, 5, 18, -0.4, 0x77, 0x88, 0x99);
    pusht_block(100, 110, 20, 5, 2.2, 0x44, 0x60, 0xf0);
    pusht_block(4, 6, 12, 5, 0.3, 0x44, 0x60, 0xf0); /* partly off the surface */
    op_circle(0x41, 0x69, 0xe1, 90, 30, 15);
    op_circle(0x90, 0xb0, 0xff, 90, 30, 11);
    op_circle(0x41, 0x69, 0xe1, 124, 64, 15);
    op_circle(0x90, 0xb0, 0xff, 124, 64, 11);
    op_circle(0x41, 0x69, 0xe1, 20, 100, 11);
    {
        int a[][4] = {{10, 20, 110, 35}, {90, 5, 70, 120}, {0, 127, 127, 0},
                      {30, 60, 31, 100}, {5, 80, 120, 80}, {64, 2, 64, 126},
                      {-10, 40, 50, 140}, {100, 30, 80, 34}};
        int n = (int)(sizeof a / sizeof a[0]);
        for (i = 0; i < n; ++i)
            op_aalines(i * 30 % 256, 40 + i * 20, 200 - i * 15, 2, a[i]);
    }
    finish(dir, "pusht");

    /* 2. Random filled polygons (3..9 points, concave, repeated points) and circles (radius
     *    0..40, some partly off the surface). */
    begin(128, 128);
    op_fill(255, 255, 255);
    for (k = 0; k < 40; ++k) {
        int n = rnd(3, 9), xy[20];
        for (i = 0; i < n; ++i) {
            xy[2 * i] = rnd(-20, 147);
            xy[2 * i + 1] = rnd(-20, 147);
        }
        if (k % 4 == 0) { /* closing point repeated */
            xy[2 * n] = xy[0];
            xy[2 * n + 1] = xy[1];
            ++n;
        }
        op_polygon(rnd(0, 255), rnd(0, 255), rnd(0, 255), n, xy);
        op_circle(rnd(0, 255), rnd(0, 255), rnd(0, 255), rnd(-30, 157), rnd(-30, 157),
                  rnd(0, 40));
    }
    finish(dir, "polygons_circles");

    /* 3. Random thick lines (width 1..6, all angles) with antialiased lines over them. */
    begin(128, 128);
    op_fill(255, 255, 255);
    for (k = 0; k < 60; ++k) {
        int xy[4] = {rnd(-20, 147), rnd(-20, 147), 0, 0};
        switch (k % 4) {
            case 0: xy[2] = xy[0]; xy[3] = rnd(-20, 147); break; /* vertical */
            case 1: xy[2] = rnd(-20, 147); xy[3] = xy[1]; break; /* horizontal */
            default: xy[2] = rnd(-20, 147); xy[3] = rnd(-20, 147); break;
        }
        op_lines(rnd(0, 255), rnd(0, 255), rnd(0, 255), rnd(1, 6), 2, xy);
    }
    for (k = 0; k < 60; ++k) {
        int xy[6] = {rnd(-20, 147), rnd(-20, 147), rnd(-20, 147), rnd(-20, 147),
                     rnd(-20, 147), rnd(-20, 147)};
        op_aalines(rnd(0, 255), rnd(0, 255), rnd(0, 255), k % 3 ? 2 : 3, xy);
    }
    finish(dir, "lines_aalines");
    return 0;
}
#endif
