build-dyn/common/journal.o: common/journal.c common/cgroup.h \
 common/time-util.h common/fileio.h common/journal.h common/standby.h \
 common/macro.h common/strv.h
common/cgroup.h:
common/time-util.h:
common/fileio.h:
common/journal.h:
common/standby.h:
common/macro.h:
common/strv.h:
