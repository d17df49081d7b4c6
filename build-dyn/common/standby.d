build-dyn/common/standby.o: common/standby.c common/macro.h \
 common/standby.h
common/macro.h:
common/standby.h:
