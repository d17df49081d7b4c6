build-dyn/freezer/listener-stats.o: freezer/listener-stats.c \
 freezer/sdbus-dl.h common/log.h common/macro.h freezer/manager.h \
 common/config.h common/standby.h common/time-util.h common/journal.h \
 common/strv.h
freezer/sdbus-dl.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/journal.h:
common/strv.h:
