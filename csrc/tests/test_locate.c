/* test_locate.c -- the segment grid behind random queries: when a call
 * gets one, and that each cell starts in the segment it names. */
#include <math.h>
#include <stdlib.h>

#include "kb_test.h"
#include "spline/kb_locate.h"

#define N_SEG 1000

/* Uneven knots: 0.01 to 3 apart. */
static void uneven_knots(double *k)
{
    k[0] = -50.0;
    for (ptrdiff_t i = 1; i <= N_SEG; i++)
        k[i] = k[i - 1] + 0.01 + 2.99 * (0.5 + 0.5 * sin(7.3 * (double)i));
}

KB_TEST(test_grid_cells_start_in_their_segment)
{
    static double k[N_SEG + 1];
    uneven_knots(k);
    const ptrdiff_t cells[] = {2, 37, N_SEG, 2 * N_SEG};
    for (size_t c = 0; c < sizeof cells / sizeof *cells; c++) {
        seg_grid g = {.cells = cells[c]};
        g.first = malloc((size_t)g.cells * sizeof *g.first);
        KB_ASSERT(g.first != NULL);
        grid_build(&g, k, N_SEG);
        for (ptrdiff_t j = 0; j < g.cells; j++) {
            const double start = k[0] + (double)j / g.per_cell;
            const ptrdiff_t s = g.first[j];
            KB_ASSERT(s >= 0 && s < N_SEG && k[s] <= start);
            KB_ASSERT(s == N_SEG - 1 || start < k[s + 1]);
        }
        free(g.first);
    }
}

KB_TEST(test_grid_only_where_it_pays)
{
    static double k[N_SEG + 1], t[3 * N_SEG];
    uneven_knots(k);
    for (ptrdiff_t i = 0; i < 3 * N_SEG; i++)
        t[i] = k[0] + fmod(i * 0.618034, 1.0) * (k[N_SEG] - k[0]);  /* unsorted */
    seg_grid g;
    grid_alloc(&g, N_SEG, t, 2 * N_SEG, 2 * N_SEG);  /* many queries: two cells a segment */
    KB_ASSERT(g.cells == 2 * N_SEG && g.first != NULL);
    free(g.first);
    grid_alloc(&g, N_SEG, t, 300, 900);  /* few, unsorted: a cell per ten values */
    KB_ASSERT(g.cells == 90 && g.first != NULL);
    free(g.first);
    grid_alloc(&g, N_SEG, k, 300, 900);  /* few and ascending: found from the one before */
    KB_ASSERT(g.first == NULL);
    grid_alloc(&g, 64, t, 100, 300);     /* a short track: its search stays in the cache */
    KB_ASSERT(g.first == NULL);
    grid_alloc(&g, N_SEG, t, 3, 9);      /* too few for a cell */
    KB_ASSERT(g.first == NULL);
}
