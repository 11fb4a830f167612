#include "metrics_internal.h"

#include <stdlib.h>
#include <string.h>

struct metrics_registry *metrics_registry_new(void)
{
    struct metrics_registry *reg = calloc(1, sizeof(*reg));
    if (!reg)
        return NULL;
    pthread_mutex_init(&reg->lock, NULL);
    reg->tail = &reg->families;
    return reg;
}

static void free_series(struct metric *m)
{
    while (m->series) {
        struct metric_series *s = m->series;
        m->series = s->next;
        for (size_t i = 0; i < m->n_labels; i++)
            free(s->values[i]);
        free(s);
    }
}

void metrics_registry_free(struct metrics_registry *reg)
{
    if (!reg)
        return;
    while (reg->families) {
        struct metric *m = reg->families;
        reg->families = m->next;
        free_series(m);
        for (size_t i = 0; i < m->n_labels; i++)
            free(m->labels[i]);
        free(m->name);
        free(m->help);
        free(m);
    }
    free(reg->collectors);
    pthread_mutex_destroy(&reg->lock);
    free(reg);
}

static struct metric *family(struct metrics_registry *reg, enum metric_type type, const char *name,
                             const char *help, size_t n_labels, const char *const *labels)
{
    if (!reg || n_labels > METRICS_MAX_LABELS)
        return NULL;
    struct metric *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->reg = reg;
    m->type = type;
    m->n_labels = n_labels;
    bool ok = (m->name = strdup(name)) && (m->help = strdup(help));
    for (size_t i = 0; ok && i < n_labels; i++)
        ok = (m->labels[i] = strdup(labels[i])) != NULL;
    if (!ok) {
        for (size_t i = 0; i < n_labels; i++)
            free(m->labels[i]);
        free(m->name);
        free(m->help);
        free(m);
        return NULL;
    }
    pthread_mutex_lock(&reg->lock);
    *reg->tail = m;
    reg->tail = &m->next;
    pthread_mutex_unlock(&reg->lock);
    return m;
}

struct metric *metrics_counter(struct metrics_registry *reg, const char *name, const char *help,
                               size_t n_labels, const char *const *labels)
{
    return family(reg, METRIC_COUNTER, name, help, n_labels, labels);
}

struct metric *metrics_gauge(struct metrics_registry *reg, const char *name, const char *help,
                             size_t n_labels, const char *const *labels)
{
    return family(reg, METRIC_GAUGE, name, help, n_labels, labels);
}

struct metric *metrics_histogram(struct metrics_registry *reg, const char *name, const char *help,
                                 size_t n_labels, const char *const *labels, const double *bounds,
                                 size_t n_bounds)
{
    if (n_bounds > METRICS_MAX_BUCKETS)
        return NULL;
    for (size_t i = 1; i < n_bounds; i++)
        if (!(bounds[i] > bounds[i - 1]))
            return NULL;
    struct metric *m = family(reg, METRIC_HISTOGRAM, name, help, n_labels, labels);
    if (m) {
        /* Set before any update can read it: updates take the lock
         * that published m. */
        pthread_mutex_lock(&reg->lock);
        memcpy(m->bounds, bounds, n_bounds * sizeof(*bounds));
        m->n_bounds = n_bounds;
        pthread_mutex_unlock(&reg->lock);
    }
    return m;
}

/* The series of these label values, made at its first update; NULL when
 * out of memory (the update is lost, never the service). Lock held. */
static struct metric_series *series(struct metric *m, const char *const *values)
{
    struct metric_series **at = &m->series;
    for (; *at; at = &(*at)->next) {
        size_t i = 0;
        while (i < m->n_labels && strcmp((*at)->values[i], values[i]) == 0)
            i++;
        if (i == m->n_labels)
            return *at;
    }
    struct metric_series *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    for (size_t i = 0; i < m->n_labels; i++)
        if (!(s->values[i] = strdup(values[i]))) {
            for (size_t j = 0; j < i; j++)
                free(s->values[j]);
            free(s);
            return NULL;
        }
    *at = s;
    return s;
}

static void update(struct metric *m, enum metric_type type, const char *const *values, double v,
                   bool set)
{
    if (!m || m->type != type)
        return;
    pthread_mutex_lock(&m->reg->lock);
    struct metric_series *s = series(m, values);
    if (s) {
        if (type == METRIC_HISTOGRAM) {
            size_t b = 0;
            while (b < m->n_bounds && v > m->bounds[b])
                b++;
            s->buckets[b]++;
            s->count++;
            s->value += v;
        } else {
            s->value = set ? v : s->value + v;
        }
    }
    pthread_mutex_unlock(&m->reg->lock);
}

void metric_add(struct metric *m, const char *const *values, double v)
{
    /* A counter only goes up (Prometheus reads a drop as a restart). */
    if (m && m->type == METRIC_COUNTER && v < 0)
        return;
    update(m, m && m->type == METRIC_GAUGE ? METRIC_GAUGE : METRIC_COUNTER, values, v, false);
}

void metric_set(struct metric *m, const char *const *values, double v)
{
    update(m, m && m->type == METRIC_COUNTER ? METRIC_COUNTER : METRIC_GAUGE, values, v, true);
}

void metric_observe(struct metric *m, const char *const *values, double v)
{
    update(m, METRIC_HISTOGRAM, values, v, false);
}

void metric_clear(struct metric *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->reg->lock);
    free_series(m);
    pthread_mutex_unlock(&m->reg->lock);
}

int metrics_on_collect(struct metrics_registry *reg, metrics_collect_fn fn, void *arg)
{
    if (!reg)
        return -1;
    pthread_mutex_lock(&reg->lock);
    struct metrics_collector *c =
        realloc(reg->collectors, (reg->n_collectors + 1) * sizeof(*reg->collectors));
    if (c) {
        reg->collectors = c;
        c[reg->n_collectors++] = (struct metrics_collector){ fn, arg };
    }
    pthread_mutex_unlock(&reg->lock);
    return c ? 0 : -1;
}
