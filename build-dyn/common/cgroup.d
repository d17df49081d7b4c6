build-dyn/common/cgroup.o: common/cgroup.c common/cgroup.h \
 common/time-util.h common/fileio.h common/macro.h common/strv.h
common/cgroup.h:
common/time-util.h:
common/fileio.h:
common/macro.h:
common/strv.h:
