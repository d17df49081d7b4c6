build-dyn/listener/dbus-call.o: listener/dbus-call.c common/bus-monitor.h \
 listener/dbus-wire.h listener/listener.h freezer/manager.h \
 common/config.h common/standby.h common/time-util.h common/macro.h \
 common/journal.h listener/rules.h common/log.h common/strv.h
common/bus-monitor.h:
listener/dbus-wire.h:
listener/listener.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/macro.h:
common/journal.h:
listener/rules.h:
common/log.h:
common/strv.h:
