build-dyn/common/fileio.o: common/fileio.c common/fileio.h common/macro.h
common/fileio.h:
common/macro.h:
