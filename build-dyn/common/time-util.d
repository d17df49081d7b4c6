build-dyn/common/time-util.o: common/time-util.c common/macro.h \
 common/time-util.h
common/macro.h:
common/time-util.h:
