build-dyn/common/locks.o: common/locks.c common/fileio.h common/locks.h \
 common/macro.h
common/fileio.h:
common/locks.h:
common/macro.h:
