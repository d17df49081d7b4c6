build-dyn/listener/exit-standby.o: listener/exit-standby.c \
 listener/listener.h freezer/manager.h common/config.h common/standby.h \
 common/time-util.h common/macro.h common/journal.h listener/rules.h \
 common/log.h
listener/listener.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/macro.h:
common/journal.h:
listener/rules.h:
common/log.h:
