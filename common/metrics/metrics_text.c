/* The text exposition format 0.0.4 of a registry (Prometheus'
 * "Exposition formats"). */
#include "metrics_internal.h"

#include <math.h>
#include <stdio.h>

static const char *const type_names[] = { "counter", "gauge", "histogram" };

/* HELP text escapes \ and newline; label values also ". */
static void append_escaped(struct strbuf *out, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            strbuf_append(out, "\\\\");
        else if (*s == '\n')
            strbuf_append(out, "\\n");
        else if (quote && *s == '"')
            strbuf_append(out, "\\\"");
        else
            strbuf_append_n(out, s, 1);
    }
}

static void append_number(struct strbuf *out, double v)
{
    if (isinf(v))
        strbuf_append(out, v > 0 ? "+Inf" : "-Inf");
    else if (isnan(v))
        strbuf_append(out, "NaN");
    else
        strbuf_appendf(out, "%.15g", v);
}

/* name{label="value",...,le="bound"} value */
static void append_sample(struct strbuf *out, const struct metric *m, const char *suffix,
                          const struct metric_series *s, const double *le, double v)
{
    strbuf_append(out, m->name);
    strbuf_append(out, suffix);
    if (m->n_labels || le) {
        strbuf_append(out, "{");
        for (size_t i = 0; i < m->n_labels; i++) {
            strbuf_appendf(out, "%s%s=\"", i ? "," : "", m->labels[i]);
            append_escaped(out, s->values[i], true);
            strbuf_append(out, "\"");
        }
        if (le) {
            strbuf_append(out, m->n_labels ? ",le=\"" : "le=\"");
            append_number(out, *le);
            strbuf_append(out, "\"");
        }
        strbuf_append(out, "}");
    }
    strbuf_append(out, " ");
    append_number(out, v);
    strbuf_append(out, "\n");
}

static void render_family(struct strbuf *out, const struct metric *m)
{
    strbuf_appendf(out, "# HELP %s ", m->name);
    append_escaped(out, m->help, false);
    strbuf_appendf(out, "\n# TYPE %s %s\n", m->name, type_names[m->type]);
    for (const struct metric_series *s = m->series; s; s = s->next) {
        if (m->type != METRIC_HISTOGRAM) {
            append_sample(out, m, "", s, NULL, s->value);
            continue;
        }
        uint64_t cumulative = 0;
        for (size_t b = 0; b <= m->n_bounds; b++) {
            cumulative += s->buckets[b];
            double le = b < m->n_bounds ? m->bounds[b] : INFINITY;
            append_sample(out, m, "_bucket", s, &le, (double)cumulative);
        }
        append_sample(out, m, "_sum", s, NULL, s->value);
        append_sample(out, m, "_count", s, NULL, (double)s->count);
    }
}

void metrics_render(struct metrics_registry *reg, struct strbuf *out)
{
    if (!reg)
        return;
    /* Collectors update families themselves: run them unlocked (they
     * are all registered before the listener starts). */
    pthread_mutex_lock(&reg->lock);
    size_t n = reg->n_collectors;
    struct metrics_collector *collectors = reg->collectors;
    pthread_mutex_unlock(&reg->lock);
    for (size_t i = 0; i < n; i++)
        collectors[i].fn(collectors[i].arg);
    pthread_mutex_lock(&reg->lock);
    for (const struct metric *m = reg->families; m; m = m->next)
        render_family(out, m);
    pthread_mutex_unlock(&reg->lock);
}
