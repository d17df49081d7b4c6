build-dyn/freezer/lock-scan.o: freezer/lock-scan.c common/cgroup.h \
 common/time-util.h common/locks.h common/log.h common/macro.h \
 freezer/manager.h common/config.h common/standby.h common/journal.h \
 common/strv.h
common/cgroup.h:
common/time-util.h:
common/locks.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
common/strv.h:
