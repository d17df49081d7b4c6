/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "macro.h"
#include "strv.h"

size_t strv_length(char * const *l) {
        size_t n = 0;

        if (l)
                while (l[n])
                        n++;
        return n;
}

bool strv_contains(char * const *l, const char *s) {
        if (l)
                for (char * const *i = l; *i; i++)
                        if (streq(*i, s))
                                return true;
        return false;
}

int free_and_strdup(char **field, const char *value) {
        char *v = NULL;

        if (value && !(v = strdup(value)))
                return -ENOMEM;
        free(*field);
        *field = v;
        return 0;
}

int strv_consume(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **nl;

        if (!s)
                return -ENOMEM;
        nl = realloc(*l, sizeof(char *) * (n + 2));
        if (!nl) {
                free(s);
                return -ENOMEM;
        }
        nl[n] = s;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

int strv_extend(char ***l, const char *s) {
        return strv_consume(l, strdup(s));
}

int strv_split_words(const char *s, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;

        /* An empty list is an allocated array with just the NULL. */
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (const char *p = s;;) {
                size_t n;
                int r;

                p += strspn(p, " \t\n");
                if (!*p)
                        break;
                n = strcspn(p, " \t\n");
                r = strv_consume(&l, strndup(p, n));
                if (r < 0)
                        return r;
                p += n;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        qsort(l, strv_length(l), sizeof(char *), cmp_str);
}
