build-dyn/listener/late.o: listener/late.c listener/listener.h \
 freezer/manager.h common/config.h common/standby.h common/time-util.h \
 common/macro.h common/journal.h listener/rules.h common/log.h \
 common/strv.h
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
