build-dyn/common/proc.o: common/proc.c common/fileio.h common/macro.h \
 common/proc.h
common/fileio.h:
common/macro.h:
common/proc.h:
