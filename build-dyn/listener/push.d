build-dyn/listener/push.o: listener/push.c listener/listener.h \
 freezer/manager.h common/config.h common/standby.h common/time-util.h \
 common/macro.h common/journal.h listener/rules.h common/log.h \
 common/strv.h common/unit-name.h
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
common/unit-name.h:
