build-dyn/freezer/systemd-target.o: freezer/systemd-target.c \
 common/cgroup.h common/time-util.h common/log.h common/macro.h \
 freezer/manager.h common/config.h common/standby.h common/journal.h \
 freezer/sdbus-dl.h
common/cgroup.h:
common/time-util.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
freezer/sdbus-dl.h:
