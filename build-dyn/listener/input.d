build-dyn/listener/input.o: listener/input.c \
 /usr/include/libevdev-1.0/libevdev/libevdev.h common/fileio.h \
 listener/listener.h freezer/manager.h common/config.h common/standby.h \
 common/time-util.h common/macro.h common/journal.h listener/rules.h \
 common/log.h common/strv.h
/usr/include/libevdev-1.0/libevdev/libevdev.h:
common/fileio.h:
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
