build-dyn/common/unit-name.o: common/unit-name.c common/cgroup.h \
 common/time-util.h common/fileio.h common/macro.h common/strv.h \
 common/unit-name.h
common/cgroup.h:
common/time-util.h:
common/fileio.h:
common/macro.h:
common/strv.h:
common/unit-name.h:
