build-dyn/listener/cgroup-watch.o: listener/cgroup-watch.c \
 common/cgroup.h common/time-util.h listener/listener.h freezer/manager.h \
 common/config.h common/standby.h common/macro.h common/journal.h \
 listener/rules.h common/log.h common/strv.h
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
