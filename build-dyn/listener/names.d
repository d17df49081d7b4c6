build-dyn/listener/names.o: listener/names.c listener/listener.h \
 freezer/manager.h common/config.h common/standby.h common/time-util.h \
 common/macro.h common/journal.h listener/rules.h common/strv.h
listener/listener.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/macro.h:
common/journal.h:
listener/rules.h:
common/strv.h:
