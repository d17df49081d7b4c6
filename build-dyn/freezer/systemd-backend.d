build-dyn/freezer/systemd-backend.o: freezer/systemd-backend.c \
 common/log.h common/macro.h freezer/manager.h common/config.h \
 common/standby.h common/time-util.h common/journal.h freezer/sdbus-dl.h \
 common/strv.h common/unit-name.h
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/time-util.h:
common/journal.h:
freezer/sdbus-dl.h:
common/strv.h:
common/unit-name.h:
