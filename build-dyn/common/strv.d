build-dyn/common/strv.o: common/strv.c common/macro.h common/strv.h
common/macro.h:
common/strv.h:
