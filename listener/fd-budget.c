/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The descriptors the listener keeps for what others made: duplicates of
 * the sockets of frozen units (sockets.c), of their bus connections and
 * their processes' pidfds (bus-peek.c), and the cgroup and cgroup.freeze of
 * each journal unit (unit-state.c). Any user makes as many of those as they
 * like (sockets by the ten thousand in one process, cgroups by the
 * thousand), and a rule's unit name matches their cgroups of that name too;
 * unbounded, they took the listener to its limit, and then its own work
 * (a refreeze, a new unit held, a journal read) failed with EMFILE.
 *
 * So they come out of a pool: the limit of open files less a reserve kept
 * for the listener's own work (LISTENER_FDS_RESERVE_MIN, or a quarter of
 * the limit if more). Each account (common/cgroup.h: the delegated subtree
 * a cgroup lies in, one per user whatever uids their cgroups show; root's
 * for the rest) takes from it: users together at most three quarters of
 * the pool, one user at most an eighth, root up to all of it. Past its
 * share an account's sockets are not watched, its bus connections not
 * held (a call to them is looked for afresh), its units' cgroups opened
 * at each thaw instead of kept: logged once per account, counted in
 * fds_refused. Nothing of root's or another user's is refused for it. */
#include <sys/resource.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"

struct FdAccount {
        uint64_t id;             /* CgroupAccount.id; 0: root's */
        uid_t uid;
        size_t used;
        bool told;               /* its refusal logged */
};

static FdBudget *budget(Listener *l) {
        FdBudget *b = &l->fd_budget;

        if (b->pool == 0) {
                struct rlimit rl;
                size_t limit = getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur != RLIM_INFINITY
                                       ? (size_t) rl.rlim_cur
                                       : 1024;
                size_t reserve = MAX((size_t) LISTENER_FDS_RESERVE_MIN, limit / 4);
                b->pool = limit > reserve ? limit - reserve : 1;
        }
        return b;
}

static FdAccount *account_find(FdBudget *b, uint64_t id, bool create) {
        for (size_t i = 0; i < b->n_accounts; i++)
                if (b->accounts[i].id == id)
                        return &b->accounts[i];
        if (!create)
                return NULL;
        FdAccount *n = realloc(b->accounts, (b->n_accounts + 1) * sizeof(FdAccount));
        if (!n)
                return NULL;
        b->accounts = n;
        b->accounts[b->n_accounts] = (FdAccount) { .id = id };
        return &b->accounts[b->n_accounts++];
}

int listener_fds_take(Listener *l, FdCharge *c, size_t n, const char *what) {
        FdBudget *b = budget(l);
        bool root = c->account == 0;
        FdAccount *a = account_find(b, c->account, true);

        if (!a)
                return -ENOMEM;
        a->uid = c->uid;
        if (b->used + n > b->pool || (!root && (b->users_used + n > b->pool / 4 * 3 || a->used + n > b->pool / 8))) {
                l->stats.fds_refused++;
                if (!a->told) {
                        a->told = true;
                        if (root)
                                log_warning("Not keeping more descriptors for %s: the listener keeps %zu of at most "
                                            "%zu for what it watches.", what, b->used, b->pool);
                        else
                                log_notice("Not keeping more descriptors for %s (uid %u's cgroups): they keep %zu, "
                                           "users %zu, all %zu, of at most %zu, %zu and %zu; the rest is not watched.",
                                           what, (unsigned) c->uid, a->used, b->users_used, b->used, b->pool / 8,
                                           b->pool / 4 * 3, b->pool);
                }
                return -EMFILE;
        }
        a->used += n;
        b->used += n;
        if (!root)
                b->users_used += n;
        c->n += n;
        return 0;
}

void listener_fds_give_back(Listener *l, FdCharge *c, size_t n) {
        FdBudget *b = &l->fd_budget;
        FdAccount *a = account_find(b, c->account, false);

        n = MIN(n, c->n);
        c->n -= n;
        if (!a)
                return;
        a->used -= MIN(n, a->used);
        b->used -= MIN(n, b->used);
        if (c->account != 0)
                b->users_used -= MIN(n, b->users_used);
        /* An account that holds nothing goes, unless it was refused: then
         * it stays (told) until nothing is held at all, so that its
         * refusal is logged once a standby. */
        if (b->used == 0)
                b->n_accounts = 0;
        else if (a->used == 0 && !a->told)
                *a = b->accounts[--b->n_accounts];
}

int listener_fds_charge_for(Listener *l, const char *cgroup, FdCharge *ret) {
        CgroupAccount a;
        int r = cgroup_account(l->m.root_fd, cgroup, &a);
        if (r < 0)
                return r;
        *ret = (FdCharge) { .account = a.id, .uid = a.uid };
        return 0;
}

void listener_fds_done(Listener *l) {
        l->fd_budget.accounts = mfree(l->fd_budget.accounts);
        l->fd_budget.n_accounts = 0;
}
