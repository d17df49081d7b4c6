build-dyn/common/config.o: common/config.c common/cgroup.h \
 common/time-util.h common/config.h common/standby.h common/fileio.h \
 common/ini-file.h common/macro.h common/strv.h common/unit-name.h
common/cgroup.h:
common/time-util.h:
common/config.h:
common/standby.h:
common/fileio.h:
common/ini-file.h:
common/macro.h:
common/strv.h:
common/unit-name.h:
