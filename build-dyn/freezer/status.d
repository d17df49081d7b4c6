build-dyn/freezer/status.o: freezer/status.c common/cgroup.h \
 common/time-util.h common/macro.h common/json.h freezer/manager.h \
 common/config.h common/standby.h common/journal.h common/unit-name.h
common/cgroup.h:
common/time-util.h:
common/macro.h:
common/json.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
common/unit-name.h:
