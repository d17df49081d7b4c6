build-dyn/listener/sockets.o: listener/sockets.c common/cgroup.h \
 common/time-util.h listener/dbus-wire.h common/fileio.h \
 listener/listener.h freezer/manager.h common/config.h common/standby.h \
 common/macro.h common/journal.h listener/rules.h common/log.h \
 common/strv.h
common/cgroup.h:
common/time-util.h:
listener/dbus-wire.h:
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
