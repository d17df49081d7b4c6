build-dyn/common/ini-file.o: common/ini-file.c common/ini-file.h \
 common/macro.h
common/ini-file.h:
common/macro.h:
