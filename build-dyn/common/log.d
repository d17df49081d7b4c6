build-dyn/common/log.o: common/log.c common/json.h common/log.h \
 common/macro.h
common/json.h:
common/log.h:
common/macro.h:
