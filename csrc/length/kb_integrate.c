/* kb_integrate.c -- tables of the integral of a speed (adaptive
 * Gauss-Legendre panels) and the queries on them: the integral at a time,
 * and the time at which it reaches a value (safeguarded Newton). */
#include <stdlib.h>

#include "length/kb_integrate.h"
#include "spline/kb_locate.h"

/* 10-point Gauss-Legendre on [-1, 1]: the positive nodes and their weights. */
static const double GL_X[5] = {0.14887433898163122, 0.4333953941292472, 0.6794095682990244,
                               0.8650633666889845, 0.9739065285171717};
static const double GL_W[5] = {0.2955242247147528, 0.2692667193099965, 0.219086362515982,
                               0.1494513491505804, 0.06667134430868814};

#define KB_MAX_DEPTH 48
#define KB_MAX_PANELS 4096 /* a piece; smooth ones need 4 to 30 */

static double gl10(const kb_speed *sp, ptrdiff_t tr, ptrdiff_t seg, double a, double b)
{
    const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
    double sum = 0.0;
    for (int i = 0; i < 5; i++)
        sum += GL_W[i] * (sp->fn(sp->ctx, tr, seg, mid - half * GL_X[i]) +
                          sp->fn(sp->ctx, tr, seg, mid + half * GL_X[i]));
    return half * sum;
}

void kb_table_free(kb_table *t)
{
    if (t) {
        free(t->seg_start);
        free(t->panels);
        t->seg_start = NULL;
        t->panels = NULL;
    }
}

typedef struct {
    double *data;
    ptrdiff_t n, cap;
} panel_buf;

static int push_panel(panel_buf *b, double u0, double u1, double s0, double s1)
{
    if (b->n == b->cap) {
        ptrdiff_t cap = b->cap ? 2 * b->cap : 256;
        double *grown = realloc(b->data, (size_t)cap * 4 * sizeof(double));
        if (!grown)
            return 0;
        b->data = grown;
        b->cap = cap;
    }
    double *p = b->data + 4 * b->n++;
    p[0] = u0;
    p[1] = u1;
    p[2] = s0;
    p[3] = s1;
    return 1;
}

/*
 * Panels of [a, b], a smooth piece of one segment: bisect until the two
 * halves agree with the whole to `tol` (after at least two levels, so no
 * feature hides between the first nodes).  A panel's value is its single
 * 10-point rule, so that the query s0 + GL10(u0, u) meets s1 exactly at
 * u = u1 and the integral is continuous across panels.
 */
static int piece_panels(const kb_speed *sp, ptrdiff_t tr, ptrdiff_t seg, double a, double b,
                        double tol, panel_buf *buf, double *s)
{
    struct { double a, b, whole; int depth; } stack[KB_MAX_DEPTH + 2];
    int top = 0;
    const ptrdiff_t first_panel = buf->n;
    if (!(b > a))
        return 1;
    stack[0].a = a;
    stack[0].b = b;
    stack[0].whole = gl10(sp, tr, seg, a, b);
    stack[0].depth = 0;
    while (top >= 0) {
        const double lo = stack[top].a, hi = stack[top].b, whole = stack[top].whole;
        const int depth = stack[top].depth;
        const double mid = 0.5 * (lo + hi);
        const double left = gl10(sp, tr, seg, lo, mid), right = gl10(sp, tr, seg, mid, hi);
        top--;
        /* a non-finite speed, or a piece that has had its share of panels,
         * is taken as it is rather than split for ever */
        if ((depth >= 2 && fabs(left + right - whole) <= tol) || depth >= KB_MAX_DEPTH ||
            !(mid > lo) || !(hi > mid) || !isfinite(left + right) ||
            buf->n - first_panel >= KB_MAX_PANELS) {
            if (!push_panel(buf, lo, hi, *s, *s + whole))
                return 0;
            *s += whole;
            continue;
        }
        /* depth-first, left first: panels come out in order of u */
        top++;
        stack[top].a = mid;
        stack[top].b = hi;
        stack[top].whole = right;
        stack[top].depth = depth + 1;
        top++;
        stack[top].a = lo;
        stack[top].b = mid;
        stack[top].whole = left;
        stack[top].depth = depth + 1;
    }
    return 1;
}

double kb_rising_zero(kb_slope_fn slope, const void *ctx, ptrdiff_t tr, ptrdiff_t seg,
                      double lo, double hi)
{
    for (;;) {
        const double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi))
            return hi;
        if (slope(ctx, tr, seg, mid) < 0.0)
            lo = mid;
        else
            hi = mid;
    }
}

/* The u at which ease (a, b) reaches e: kb_ease's three pieces inverted. */
static double ease_inverse(double e, double a, double b)
{
    kb_ease_pieces(&a, &b);
    const double k = 1.0 / (2.0 - a - b);
    if (e < k * a)
        return sqrt(e * a / k);
    if (b > 0.0 && e > 1.0 - k * b)
        return 1.0 - sqrt((1.0 - e) * b / k);
    return 0.5 * (e / k + a);
}

/* Where segment (tr, seg) is cut into pieces, ascending in (0, 1): where
 * ease changes piece and the speed's local minima; returns their count. */
static int segment_cuts(const kb_speed *sp, ptrdiff_t tr, ptrdiff_t seg, ptrdiff_t i,
                        double cut[KB_MAX_MINIMA + 2])
{
    int n = 0;
    if (sp->ease) {
        double a = sp->ease[2 * i], b = sp->ease[2 * i + 1];
        kb_ease_pieces(&a, &b);
        cut[n++] = a;
        cut[n++] = 1.0 - b;
    }
    if (sp->minima) {
        double e[KB_MAX_MINIMA];
        const int m = sp->minima(sp->ctx, tr, seg, e);
        for (int j = 0; j < m; j++)
            cut[n++] = sp->ease ? ease_inverse(e[j], sp->ease[2 * i], sp->ease[2 * i + 1])
                                : e[j];
    }
    int kept = 0;  /* sorted (insertion), inside (0, 1), each once */
    for (int j = 0; j < n; j++) {
        const double c = cut[j];
        if (!(c > 0.0 && c < 1.0))
            continue;
        int at = kept;
        while (at > 0 && cut[at - 1] > c)
            at--;
        if (at > 0 && cut[at - 1] == c)
            continue;
        for (int q = kept; q > at; q--)
            cut[q] = cut[q - 1];
        cut[at] = c;
        kept++;
    }
    return kept;
}

kb_status kb_table_build(const kb_speed *sp, ptrdiff_t n_tracks, ptrdiff_t n_seg,
                         kb_table *table, kb_error *err)
{
    panel_buf buf = {NULL, 0, 0};
    ptrdiff_t *seg_start = malloc((size_t)(n_tracks * n_seg + 1) * sizeof(ptrdiff_t));
    if (!seg_start)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t tr = 0; tr < n_tracks; tr++) {
        double s = 0.0;
        for (ptrdiff_t seg = 0; seg < n_seg; seg++) {
            const ptrdiff_t i = tr * n_seg + seg;
            double cut[KB_MAX_MINIMA + 2], lo = 0.0;
            const int n_cut = segment_cuts(sp, tr, seg, i, cut);
            const double tol = KB_INTEGRAL_RTOL * fabs(gl10(sp, tr, seg, 0.0, 1.0)) + 1e-300;
            seg_start[i] = buf.n;
            for (int c = 0; c <= n_cut; c++) {
                const double hi = c < n_cut ? cut[c] : 1.0;
                if (!piece_panels(sp, tr, seg, lo, hi, tol, &buf, &s)) {
                    free(seg_start);
                    free(buf.data);
                    return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
                }
                lo = hi;
            }
        }
    }
    seg_start[n_tracks * n_seg] = buf.n;
    table->n_tracks = n_tracks;
    table->n_seg = n_seg;
    table->n_panels = buf.n;
    table->seg_start = seg_start;
    table->panels = buf.data;
    return kb_ok(err);
}

/* The integral from the track's start to u of segment seg. */
static double value_in_segment(const kb_speed *sp, const kb_table *tab, ptrdiff_t tr,
                               ptrdiff_t seg, double u)
{
    const ptrdiff_t i = tr * tab->n_seg + seg;
    ptrdiff_t lo = tab->seg_start[i], hi = tab->seg_start[i + 1] - 1;
    while (lo < hi) {  /* the last panel with u0 <= u */
        ptrdiff_t mid = lo + (hi - lo + 1) / 2;
        if (tab->panels[4 * mid] <= u)
            lo = mid;
        else
            hi = mid - 1;
    }
    const double *p = tab->panels + 4 * lo;
    if (u >= p[1])
        return p[3];
    if (u <= p[0])
        return p[2];
    return p[2] + gl10(sp, tr, seg, p[0], u);
}

/* The segment and u at which the integral of track tr reaches s, for
 * 0 < s < total: the first panel whose end reaches s (so panels where the
 * curve rests are passed over), then Newton inside it on
 * F(u) = s0 + GL10(u0, u), bisecting whenever a step leaves the bracket. */
static void inverse(const kb_speed *sp, const kb_table *tab, ptrdiff_t tr, double s,
                    ptrdiff_t *seg_out, double *u_out)
{
    const ptrdiff_t S = tab->n_seg, first = tab->seg_start[tr * S];
    ptrdiff_t lo = first, hi = tab->seg_start[tr * S + S] - 1;
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (tab->panels[4 * mid + 3] >= s)
            hi = mid;
        else
            lo = mid + 1;
    }
    const double *p = tab->panels + 4 * lo;
    ptrdiff_t a = 0, b = S - 1;  /* the segment holding panel lo */
    while (a < b) {
        ptrdiff_t mid = a + (b - a + 1) / 2;
        if (tab->seg_start[tr * S + mid] <= lo)
            a = mid;
        else
            b = mid - 1;
    }
    *seg_out = a;
    const double total = tab->panels[4 * (tab->seg_start[tr * S + S] - 1) + 3];
    const double tol = 1e-14 * total;
    double ulo = p[0], uhi = p[1];
    double u = p[3] > p[2] ? p[0] + (s - p[2]) / (p[3] - p[2]) * (p[1] - p[0]) : p[0];
    for (int iter = 0; iter < 100 && p[3] > p[2]; iter++) {
        const double g = p[2] + gl10(sp, tr, a, p[0], u) - s;
        if (fabs(g) <= tol)
            break;
        if (g < 0.0)
            ulo = u;
        else
            uhi = u;
        if (!(uhi - ulo > 4e-16))
            break;
        const double f = sp->fn(sp->ctx, tr, a, u);
        double next = f > 0.0 ? u - g / f : 0.5 * (ulo + uhi);
        if (!(next > ulo && next < uhi))
            next = 0.5 * (ulo + uhi);
        u = next;
    }
    *u_out = u;
}

static double end_rate(const kb_speed *sp, const double *k, ptrdiff_t tr, ptrdiff_t S,
                       int at_end)
{
    const ptrdiff_t seg = at_end ? S - 1 : 0;
    return sp->fn(sp->ctx, tr, seg, at_end ? 1.0 : 0.0) / (k[seg + 1] - k[seg]);
}

static double total_of(const kb_table *tab, ptrdiff_t tr)
{
    return tab->panels[4 * (tab->seg_start[(tr + 1) * tab->n_seg] - 1) + 3];
}

static int table_fits(const kb_domain *dom, const kb_table *tab, ptrdiff_t tb, ptrdiff_t te)
{
    return tab && tab->seg_start && tab->panels && tab->n_tracks == dom->n_tracks &&
           tab->n_seg == dom->n_seg && tb >= 0 && te <= dom->n_tracks && tb <= te;
}

kb_status kb_table_value_at(const kb_speed *sp, const kb_domain *dom, const kb_table *tab,
                            const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                            ptrdiff_t tb, ptrdiff_t te, double *out, kb_error *err)
{
    /* the query checks are the position curve's; they read no coefficients */
    const double no_coef = 0.0;
    const kb_curve view = {dom->n_tracks, dom->n_seg, 1, dom->knots, dom->knots_stride,
                           &no_coef, NULL, dom->extrap};
    kb_status st = kb_curve_validate(&view, 0, t, n_eval, t_stride, err);
    if (st != KB_OK)
        return st;
    if (!table_fits(dom, tab, tb, te) || !out)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const ptrdiff_t S = dom->n_seg;
    for (ptrdiff_t tr = tb; tr < te; tr++) {
        const double *k = dom->knots + tr * dom->knots_stride;
        const double t0 = k[0], t1 = k[S], span = t1 - t0, total = total_of(tab, tr);
        ptrdiff_t hint = 0;
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            double x = t[tr * t_stride + i], turns = 0.0;
            if (dom->extrap == KB_EXTRAP_PERIODIC && (x < t0 || x > t1)) {
                turns = floor((x - t0) / span);
                x = fmin(fmax(x - turns * span, t0), t1);
            }
            kb_loc L;
            locate(k, S, dom->extrap, x, &hint, &L);
            double v = value_in_segment(sp, tab, tr, L.seg, L.u);
            if (L.outside)
                v += L.excess * end_rate(sp, k, tr, S, L.excess > 0.0);
            out[tr * n_eval + i] = turns * total + v;
        }
    }
    return kb_ok(err);
}

kb_status kb_table_time_at(const kb_speed *sp, const kb_domain *dom, const kb_table *tab,
                           const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                           ptrdiff_t tb, ptrdiff_t te, double *out, kb_error *err)
{
    if (!table_fits(dom, tab, tb, te) || !out || n_eval < 0 || (n_eval > 0 && !s) ||
        (s_stride != 0 && s_stride != n_eval))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t tr = tb; tr < te; tr++) {
        const double total = total_of(tab, tr);
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            const double v = s[tr * s_stride + i];
            if (!isfinite(v))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_T, s_stride ? tr : -1, i);
            if (dom->extrap == KB_EXTRAP_ERROR &&
                (v < -1e-12 * total || v > total * (1.0 + 1e-12)))
                return kb_fail(err, KB_EDOMAIN, KB_ARG_T, tr, i);
        }
    }
    const ptrdiff_t S = dom->n_seg;
    for (ptrdiff_t tr = tb; tr < te; tr++) {
        const double *k = dom->knots + tr * dom->knots_stride;
        const double total = total_of(tab, tr), t0 = k[0], t1 = k[S];
        for (ptrdiff_t i = 0; i < n_eval; i++) {
            double x = s[tr * s_stride + i], shift = 0.0, t;
            if ((x < 0.0 || x > total) && dom->extrap == KB_EXTRAP_PERIODIC && total > 0.0) {
                const double turns = floor(x / total);
                x = fmin(fmax(x - turns * total, 0.0), total);
                shift = turns * (t1 - t0);
            }
            if (x > total || x < 0.0) {
                const int after = x > total;
                const double rate = dom->extrap == KB_EXTRAP_LINEAR
                                        ? end_rate(sp, k, tr, S, after) : 0.0;
                t = after ? t1 : t0;  /* clamp, and error within its tolerance */
                if (rate > 0.0)
                    t += (after ? x - total : x) / rate;
            } else if (x <= 0.0) {
                t = t0;  /* the domain's own ends, whatever rests next to them */
            } else if (x >= total) {
                t = t1;
            } else {
                ptrdiff_t seg;
                double u;
                inverse(sp, tab, tr, x, &seg, &u);
                t = u >= 1.0 ? k[seg + 1] : k[seg] + u * (k[seg + 1] - k[seg]);
            }
            out[tr * n_eval + i] = t + shift;
        }
    }
    return kb_ok(err);
}
