/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "macro.h"
#include "standby.h"

static const char * const strategy_names[_STRATEGY_MAX] = {
        [STRATEGY_FREEZE] = "freeze",
        [STRATEGY_SLACK] = "slack",
};

const char *strategy_to_string(Strategy s) {
        if (s < 0 || s >= _STRATEGY_MAX)
                return NULL;
        return strategy_names[s];
}

Strategy strategy_from_string(const char *s) {
        if (s)
                for (int i = 0; i < _STRATEGY_MAX; i++)
                        if (streq(s, strategy_names[i]))
                                return (Strategy) i;
        return _STRATEGY_INVALID;
}
