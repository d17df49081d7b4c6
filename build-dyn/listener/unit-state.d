build-dyn/listener/unit-state.o: listener/unit-state.c common/cgroup.h \
 common/time-util.h listener/listener.h freezer/manager.h common/config.h \
 common/standby.h common/macro.h common/journal.h listener/rules.h \
 common/log.h common/strv.h
common/cgroup.h:
common/time-util.h:
listener/listener.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/macro.h:
common/journal.h:
listener/rules.h:
common/log.h:
common/strv.h:
