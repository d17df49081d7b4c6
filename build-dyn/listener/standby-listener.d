build-dyn/listener/standby-listener.o: listener/standby-listener.c \
 common/cgroup.h common/time-util.h common/fileio.h listener/listener.h \
 freezer/manager.h common/config.h common/standby.h common/macro.h \
 common/journal.h listener/rules.h common/log.h common/strv.h
common/cgroup.h:
common/time-util.h:
common/fileio.h:
listener/listener.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/macro.h:
common/journal.h:
listener/rules.h:
common/log.h:
common/strv.h:
