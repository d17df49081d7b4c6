build-dyn/freezer/rearm.o: freezer/rearm.c common/cgroup.h \
 common/time-util.h common/fileio.h common/log.h common/macro.h \
 freezer/manager.h common/config.h common/standby.h common/journal.h
common/cgroup.h:
common/time-util.h:
common/fileio.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
