/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a rule's unit name stands for: the journal's leaves (what standby
 * froze) of that name and below, resolved once per journal change. */
#include "listener.h"
#include "strv.h"

/* Whether a journal leaf belongs to what a rule names: a unit name
 * (mail.service, app.slice) stands for any cgroup of that name and everything
 * below it, wherever it is (alice's and bob's mail.service alike). Rules take
 * unit names only (rules.c). */
static bool leaf_belongs(const char *leaf, const char *name) {
        size_t n = strlen(name);

        for (const char *p = leaf; p; p = strchr(p, '/')) {
                if (*p == '/')
                        p++;
                if (strneq(p, name, n) && (p[n] == 0 || p[n] == '/'))
                        return true;
        }
        return false;
}

int listener_unit_leaves(Listener *l, const char *name, char ***ret) {
        _cleanup_strv_free_ char **leaves = NULL;
        Journal *j = l->m.journal;
        int r;

        r = strv_split_words("", &leaves);
        if (r < 0)
                return r;
        for (size_t i = 0; j && i < j->n_units; i++)
                if (leaf_belongs(j->units[i].cgroup, name) && (r = strv_extend(&leaves, j->units[i].cgroup)) < 0)
                        return r;
        *ret = TAKE_PTR(leaves);
        return 0;
}

/* The leaves of a unit named by a rule: only ever the ones standby froze (the
 * journal's), never a walk of the cgroup tree; resolved once per journal
 * change. */
char **listener_resolve_unit(Listener *l, const char *unit) {
        for (ResolvedUnit *r = l->resolved; r; r = r->next)
                if (streq(r->name, unit))
                        return r->leaves;
        ResolvedUnit *r = calloc(1, sizeof(ResolvedUnit));
        if (!r || !(r->name = strdup(unit)) || listener_unit_leaves(l, unit, &r->leaves) < 0) {
                if (r)
                        free(r->name);
                free(r);
                return NULL;
        }
        r->next = l->resolved;
        l->resolved = r;
        return r->leaves;
}

void listener_forget_resolved(Listener *l) {
        while (l->resolved) {
                ResolvedUnit *r = l->resolved;
                l->resolved = r->next;
                free(r->name);
                strv_free(r->leaves);
                free(r);
        }
}
