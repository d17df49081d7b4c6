build-dyn/freezer/manager.o: freezer/manager.c common/log.h \
 common/macro.h freezer/manager.h common/config.h common/standby.h \
 common/time-util.h common/journal.h common/strv.h
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/journal.h:
common/strv.h:
