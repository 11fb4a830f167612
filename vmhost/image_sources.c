#include "image_sources.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsutil.h"

#define SOURCES_FILE_MAX (1u << 20)
#define MAX_WORDS 32

static const char *const debian_components[] = { "main", "contrib", "non-free",
                                                 "non-free-firmware" };
static const char *const companion_suffixes[] = { "", "-updates", "-security", "-backports" };

static bool suite_matches(const char *entry_suite, const char *suite)
{
    size_t n = strlen(suite);
    if (strncmp(entry_suite, suite, n) != 0)
        return false;
    for (size_t i = 0; i < sizeof(companion_suffixes) / sizeof(companion_suffixes[0]); i++)
        if (strcmp(entry_suite + n, companion_suffixes[i]) == 0)
            return true;
    return false;
}

static bool is_debian_component(const char *c)
{
    for (size_t i = 0; i < sizeof(debian_components) / sizeof(debian_components[0]); i++)
        if (strcmp(c, debian_components[i]) == 0)
            return true;
    return false;
}

static bool usable_uri(const char *uri)
{
    return strncmp(uri, "http://", 7) == 0 || strncmp(uri, "https://", 8) == 0 ||
           strncmp(uri, "file:", 5) == 0;
}

/* A key other than Debian's archive keyring means a third-party repository. */
static bool debian_key(const char *signed_by)
{
    return !signed_by || !*signed_by || strstr(signed_by, "debian-archive-keyring") != NULL;
}

/* Splits s in place at blanks; returns the number of words. */
static size_t split_words(char *s, char *words[], size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *w = strtok_r(s, " \t\r\n", &save); w && n < max;
         w = strtok_r(NULL, " \t\r\n", &save))
        words[n++] = w;
    return n;
}

static void emit(struct strbuf *out, const char *signed_by, const char *uri, const char *entry_suite,
                 char *const components[], size_t ncomponents)
{
    struct strbuf comps = { 0 };
    for (size_t i = 0; i < ncomponents; i++)
        if (is_debian_component(components[i]))
            strbuf_appendf(&comps, " %s", components[i]);
    if (comps.len > 0) {
        strbuf_append(out, "deb ");
        if (signed_by && *signed_by)
            strbuf_appendf(out, "[signed-by=%s] ", signed_by);
        strbuf_appendf(out, "%s %s%s\n", uri, entry_suite, strbuf_str(&comps));
    }
    strbuf_free(&comps);
}

/* One-line format: deb [opt=val ...] URI SUITE COMPONENT... */
static void parse_list_line(char *line, const char *suite, struct strbuf *out)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *words[MAX_WORDS];
    size_t n = split_words(line, words, MAX_WORDS);
    if (n < 1 || strcmp(words[0], "deb") != 0)
        return;
    size_t i = 1;
    const char *signed_by = NULL;
    if (i < n && words[i][0] == '[') {
        /* Options run until the word that ends with ']'. */
        for (; i < n; i++) {
            char *opt = words[i];
            if (*opt == '[')
                opt++;
            bool last = opt[0] && opt[strlen(opt) - 1] == ']';
            if (last)
                opt[strlen(opt) - 1] = '\0';
            if (strncasecmp(opt, "signed-by=", 10) == 0)
                signed_by = opt + 10;
            if (last) {
                i++;
                break;
            }
        }
    }
    if (n - i < 3 || !usable_uri(words[i]) || !suite_matches(words[i + 1], suite) ||
        !debian_key(signed_by))
        return;
    emit(out, signed_by, words[i], words[i + 1], &words[i + 2], n - i - 2);
}

void apt_sources_parse_list(const char *text, const char *suite, struct strbuf *out)
{
    char *copy = strdup(text);
    if (!copy) {
        out->oom = true;
        return;
    }
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        parse_list_line(line, suite, out);
    free(copy);
}

struct deb822_entry {
    char *types, *uris, *suites, *components, *signed_by, *enabled;
    bool signed_by_inline; /* an ASCII-armoured key block: not Debian's keyring file */
};

static void deb822_emit(struct deb822_entry *e, const char *suite, struct strbuf *out)
{
    if (!e->types || !e->uris || !e->suites || !e->components)
        return;
    if (e->enabled && strcasecmp(e->enabled, "no") == 0)
        return;
    if (e->signed_by_inline || !debian_key(e->signed_by))
        return;
    char *types[MAX_WORDS], *uris[MAX_WORDS], *suites[MAX_WORDS], *comps[MAX_WORDS];
    size_t ntypes = split_words(e->types, types, MAX_WORDS);
    size_t nuris = split_words(e->uris, uris, MAX_WORDS);
    size_t nsuites = split_words(e->suites, suites, MAX_WORDS);
    size_t ncomps = split_words(e->components, comps, MAX_WORDS);
    bool binary = false;
    for (size_t i = 0; i < ntypes; i++)
        binary |= strcmp(types[i], "deb") == 0;
    if (!binary)
        return;
    for (size_t u = 0; u < nuris; u++)
        for (size_t s = 0; s < nsuites; s++)
            if (usable_uri(uris[u]) && suite_matches(suites[s], suite))
                emit(out, e->signed_by, uris[u], suites[s], comps, ncomps);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

void apt_sources_parse_deb822(const char *text, const char *suite, struct strbuf *out)
{
    char *copy = strdup(text);
    if (!copy) {
        out->oom = true;
        return;
    }
    struct deb822_entry e = { 0 };
    char **last_field = NULL;
    char *p = copy;
    while (p) {
        char *line = p;
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        p = nl ? nl + 1 : NULL;

        if (line[0] == '#')
            continue;
        if (*trim(line) == '\0') { /* blank line ends a paragraph */
            deb822_emit(&e, suite, out);
            e = (struct deb822_entry){ 0 };
            last_field = NULL;
            continue;
        }
        if (line[0] == ' ' || line[0] == '\t') { /* continuation of the last field */
            if (last_field == &e.signed_by)
                e.signed_by_inline = true;
            continue;
        }
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *key = trim(line), *value = trim(colon + 1);
        static const struct {
            const char *name;
            size_t offset;
        } fields[] = {
            { "Types", offsetof(struct deb822_entry, types) },
            { "URIs", offsetof(struct deb822_entry, uris) },
            { "Suites", offsetof(struct deb822_entry, suites) },
            { "Components", offsetof(struct deb822_entry, components) },
            { "Signed-By", offsetof(struct deb822_entry, signed_by) },
            { "Enabled", offsetof(struct deb822_entry, enabled) },
        };
        last_field = NULL;
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
            if (strcasecmp(key, fields[i].name) == 0) {
                last_field = (char **)((char *)&e + fields[i].offset);
                *last_field = value;
            }
        }
    }
    deb822_emit(&e, suite, out);
    free(copy);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void parse_file(const char *path, const char *suite, struct strbuf *out)
{
    char *text = NULL;
    if (fs_read_file(path, SOURCES_FILE_MAX, &text, NULL, NULL, 0) < 0)
        return; /* unreadable or missing: apt would not use it either */
    if (has_suffix(path, ".sources"))
        apt_sources_parse_deb822(text, suite, out);
    else
        apt_sources_parse_list(text, suite, out);
    free(text);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_sources_file(const struct dirent *d)
{
    return d->d_name[0] != '.' &&
           (has_suffix(d->d_name, ".list") || has_suffix(d->d_name, ".sources"));
}

int apt_sources_for_suite(const char *etc_apt, const char *suite, struct strbuf *out, char *err,
                          size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/sources.list", etc_apt);
    parse_file(path, suite, out);

    snprintf(path, sizeof(path), "%s/sources.list.d", etc_apt);
    struct dirent **names = NULL;
    int n = scandir(path, &names, is_sources_file, by_name);
    for (int i = 0; i < n; i++) {
        char file[4096 + 256];
        snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
        parse_file(file, suite, out);
        free(names[i]);
    }
    free(names);

    if (strbuf_failed(out)) {
        snprintf(err, errlen, "apt sources: out of memory");
        return -1;
    }
    if (out->len == 0) {
        snprintf(err, errlen,
                 "no Debian mirror for suite '%s' in %s/sources.list or %s/sources.list.d/ "
                 "(*.list, *.sources): add one, e.g. 'deb http://deb.debian.org/debian %s main'",
                 suite, etc_apt, etc_apt, suite);
        return -1;
    }
    return 0;
}
