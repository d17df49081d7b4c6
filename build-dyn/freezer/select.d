build-dyn/freezer/select.o: freezer/select.c common/cgroup.h \
 common/time-util.h common/log.h common/macro.h freezer/manager.h \
 common/config.h common/standby.h common/journal.h common/proc.h \
 common/strv.h common/unit-name.h
common/cgroup.h:
common/time-util.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
common/proc.h:
common/strv.h:
common/unit-name.h:
